"""What talks to a Crisp server from outside, over its WebSocket protocol, as any client would.

* ``client.py``: :class:`CrispClient`, a Python client of the protocol (the tests, the wire bot and the load
  test use it);
* ``wirebot.py``: a computer player over the wire (``crisp-server bot``);
* ``loadtest.py``: many simulated players against a running server (``crisp-server loadtest``).

Nothing here imports the server's rooms, store or web layer: only the protocol's client side.
"""
