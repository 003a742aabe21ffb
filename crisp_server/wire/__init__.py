"""The wire format of the WebSocket protocol (``docs/protocol.md``).

* ``protocol.py``: the inbound messages as pydantic models (validated at the bridge), the protocol's error
  codes and the mapping of action messages to the engine's actions;
* ``schema.py``: pydantic models of every outbound message, for the JSON Schema (``crisp-server schema``)
  and the tests' validation; the server itself sends plain dicts encoded with orjson.
"""
