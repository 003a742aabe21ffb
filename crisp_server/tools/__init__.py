"""Offline tools: the rules engine and the computer players run in process, without a server.

* ``arena.py``: computer players against each other (``crisp-server arena``);
* ``simulate.py``: random players over the engine (the engine's property tests and the bench use it);
* ``bench.py``: the engine's own benchmark (``crisp-server bench``).
"""
