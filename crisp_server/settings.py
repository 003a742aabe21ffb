"""Server settings: typed, from ``CRISP_*`` environment variables, passed into ``create_app(settings)``."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Annotated, Final, Literal, Self

from pydantic import AliasChoices, Field, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

#: The schemes ``CRISP_DATABASE_URL`` may have (``resolved_database_url`` picks the async driver).
_DATABASE_SCHEMES: Final = frozenset(("sqlite", "sqlite+aiosqlite", "postgres", "postgresql", "postgresql+asyncpg"))


class Settings(BaseSettings):
    """Every setting can be given as an environment variable: ``host`` is ``CRISP_HOST``, and so on."""

    model_config = SettingsConfigDict(env_prefix="CRISP_", env_file=None, extra="ignore", populate_by_name=True)

    host: str = "127.0.0.1"
    #: ``CRISP_PORT``, or ``PORT`` as container platforms set it.
    port: int = Field(default=8000, ge=0, le=65535, validation_alias=AliasChoices("CRISP_PORT", "PORT", "port"))
    #: The address players use to reach the server, e.g. ``https://crisp.example.org`` behind a reverse proxy.
    #: Join links and QR codes use it; without it they use the address of the request.
    public_url: str | None = None
    #: Extra origins (``scheme://host[:port]``) whose pages may open a WebSocket; the server's own origin
    #: is always allowed.
    allowed_origins: Annotated[list[str], NoDecode] = Field(default_factory=list)
    #: Host names (``name``, ``name:port``, ``*.example.org``, or ``*`` for any) the server answers to besides
    #: ``public_url``'s host, or without it the machine's names and addresses; loopback always passes.
    allowed_hosts: Annotated[list[str], NoDecode] = Field(default_factory=list)
    #: Trust ``X-Forwarded-*`` headers from these addresses (comma-separated, or ``*``): behind a proxy.
    forwarded_allow_ips: str = "127.0.0.1"
    proxy_headers: bool = False
    #: Health checkers and metrics scrapers (comma-separated addresses or networks, or ``*``): their requests
    #: for ``/healthz`` and ``/metrics`` are answered even when the connection budget is spent (so are a
    #: trusted proxy's, whose checks come from its own address).
    monitor_ips: str = "127.0.0.1,::1"

    log_format: Literal["text", "json"] = "text"
    log_level: Literal["debug", "info", "warning", "error"] = "info"

    #: How long players may look at their two cards before play starts (unless all are ready sooner).
    peek_seconds: float = Field(default=10.0, gt=0)
    #: The pause after a round before the next one deals (unless all are ready sooner).
    next_round_seconds: float = Field(default=20.0, gt=0)
    #: Without a turn timer, a disconnected player's move times out after this long.
    disconnect_timeout_seconds: float = Field(default=60.0, gt=0)

    #: Inbound WebSocket messages larger than this are refused with ``too_large``.
    max_message_bytes: int = Field(default=4096, ge=256)
    #: Per connection: this many messages at once, refilled at ``rate_per_second``; far beyond, the socket closes.
    rate_burst: int = Field(default=30, ge=1)
    rate_per_second: float = Field(default=10.0, gt=0)
    #: Per client address: room-code look-ups (join, watch, room info) allowed in a burst and per minute.
    lookup_burst: int = Field(default=20, ge=1)
    lookup_per_minute: float = Field(default=30.0, gt=0)
    #: Messages waiting for one slow connection before the server drops it (it can resume).
    send_queue: int = Field(default=256, ge=8)
    #: Keepalive: a connection that has sent nothing for this long is pinged; one that does not answer
    #: within the timeout is dropped (a phone gone without a word, or one that stopped reading; one that
    #: sends but stops reading fills its send queue and is dropped by that).
    ping_seconds: float = Field(default=20.0, gt=0)
    ping_timeout_seconds: float = Field(default=20.0, gt=0)
    #: A closing connection that has not completed the closing handshake after this long is aborted.
    close_timeout_seconds: float = Field(default=5.0, gt=0)
    #: A connection whose request head (request line and headers) is not whole this long (up to half as long
    #: again, at random: closes spread out) after it opened, or after its first byte following a response, is
    #: answered 408 and closed.
    head_timeout_seconds: float = Field(default=10.0, gt=0, le=300)
    #: A WebSocket that has not entered a room (create, join, resume, watch) this long after its handshake is
    #: closed with 4008.
    enter_timeout_seconds: float = Field(default=30.0, gt=0, le=3600)
    #: Connections open at once from one client address (the forwarded one behind a trusted proxy); beyond,
    #: a new one is answered 429 and closed. At most a quarter of the connection budget. 0: no cap.
    connections_per_address: int = Field(default=256, ge=0)
    #: Descriptors kept for the database, its WAL checkpoint and files: the connection budget is the
    #: descriptor limit less those open at start and these; beyond it a new connection is answered 503.
    reserved_descriptors: int = Field(default=128, ge=16)
    #: Reactions: this many in a burst per player, then one per ``reaction_seconds``.
    reaction_burst: int = Field(default=3, ge=1)
    reaction_seconds: float = Field(default=2.0, gt=0)

    #: A factor on computer players' human-like pauses (about 0.7 to 2 s a move): 0 acts at once (tests).
    bot_pause: float = Field(default=1.0, ge=0, le=10)

    #: A group commit starts at least this long after the one before (ms): a busy server then writes more
    #: actions per commit and spends less CPU on commits; an action waits at most this long more. 0: at once.
    commit_interval_ms: float = Field(default=4.0, ge=0, le=100)

    #: SQLite: the WAL's limit in MB. While checkpoints cannot copy it into the database file (a read-only or
    #: immutable file, a full disk), it grows; past this, writes wait (an outage) until they can.
    wal_limit_mb: int = Field(default=1024, ge=1, le=1_048_576)

    #: Where the SQLite database lives when no database URL is given.
    data_dir: Path = Path("data")
    #: ``postgresql+asyncpg://user:password@host/db`` in production; default: a SQLite file in ``data_dir``.
    database_url: str | None = None
    #: Lobbies nobody touched for this long are closed; finished games are kept this long.
    idle_lobby_hours: float = Field(default=24.0, gt=0)
    #: A game no player has been connected to for this long is closed unfinished (its record is kept).
    idle_game_hours: float = Field(default=24.0, gt=0)
    keep_finished_days: float = Field(default=30.0, gt=0)
    #: The web client; default: ``static/`` beside the package (a source checkout) or in the working folder.
    static_dir: Path | None = None
    #: The Alembic migrations; default: ``migrations/`` beside the package or in the working folder.
    migrations_dir: Path | None = None

    #: Several nodes share the rooms through PostgreSQL (``database_url``): each room has one owner node at a
    #: time (a lease row), and a node that is not a room's owner asks for it (see docs/protocol.md).
    cluster: bool = False
    #: This node's name among the cluster's nodes; default: the host name and the port.
    node: str | None = Field(default=None, min_length=1, max_length=64)
    #: A room's lease lasts this long without renewal (a dead node's rooms move after it), renewed this often.
    lease_seconds: float = Field(default=10.0, ge=1, le=300)
    lease_renew_seconds: float = Field(default=2.0, gt=0, le=60)
    #: On SIGTERM in a cluster, the node hands its rooms over and exits when it owns none, or after this long.
    drain_seconds: float = Field(default=30.0, ge=0, le=3600)

    @model_validator(mode="after")
    def _cluster_needs_postgresql(self) -> Self:
        if self.cluster:
            url = self.resolved_database_url()
            if not url.startswith("postgresql"):
                raise ValueError(
                    "CRISP_CLUSTER needs PostgreSQL: set CRISP_DATABASE_URL=postgresql://user:password@host/db "
                    "(nodes share their rooms through it; SQLite is one process's)"
                )
            if self.lease_renew_seconds * 2 > self.lease_seconds:
                raise ValueError("CRISP_LEASE_RENEW_SECONDS must be at most half of CRISP_LEASE_SECONDS")
        return self

    def node_name(self) -> str:
        """``node``, or the host name and the port."""
        return self.node or f"{socket.gethostname()}:{self.port}"

    def resolved_database_url(self) -> str:
        if self.database_url:
            url = self.database_url
            # Accept the usual spellings and use the async drivers.
            for plain, driver in (
                ("postgres://", "postgresql+asyncpg://"),
                ("postgresql://", "postgresql+asyncpg://"),
                ("sqlite:///", "sqlite+aiosqlite:///"),
            ):
                if url.startswith(plain):
                    return driver + url[len(plain) :]
            return url
        return f"sqlite+aiosqlite:///{(self.data_dir / 'crisp.sqlite3').resolve()}"

    @field_validator("allowed_origins", mode="before")
    @classmethod
    def _split_origins(cls, value: object) -> object:
        # From the environment as "https://a.example,https://b.example"; origins compare in lower case.
        if isinstance(value, str):
            value = value.split(",")
        if isinstance(value, list):
            return [str(v).strip().rstrip("/").lower() for v in value if str(v).strip()]
        return value

    @field_validator("allowed_hosts", mode="before")
    @classmethod
    def _split_hosts(cls, value: object) -> object:
        # From the environment as "crisp.example.org,*.lan.example,10.0.0.5:8000".
        if isinstance(value, str):
            return [v.strip() for v in value.split(",") if v.strip()]
        return value

    @field_validator("database_url")
    @classmethod
    def _a_database_the_server_speaks(cls, value: str | None) -> str | None:
        # Refused at start with the others, not by a driver's traceback when the store opens it.
        if not value:
            return value
        scheme, sep, rest = value.partition("://")
        scheme = scheme.lower()
        if not sep or scheme not in _DATABASE_SCHEMES or not (rest or scheme.startswith("sqlite")):
            raise ValueError(
                "not a database URL the server speaks: sqlite:///path/to/file.sqlite3 or "
                "postgresql://user:password@host/db (also postgres://, postgresql+asyncpg://)"
            )
        return value

    @field_validator("public_url")
    @classmethod
    def _no_trailing_slash(cls, value: str | None) -> str | None:
        return value.rstrip("/") if value else value
