from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.web.harness import Harness, running_server


@pytest.fixture
async def server() -> AsyncIterator[Harness]:
    async with running_server() as harness:
        yield harness
