"""Several server nodes behind HAProxy on one PostgreSQL database (CRISP_CLUSTER=true): harness.py, conftest.py."""
