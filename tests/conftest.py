"""Shared test settings."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

# CI gets more examples; a developer's run stays quick. Deadlines are off: this machine is shared and noisy.
settings.register_profile("ci", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else "dev")
