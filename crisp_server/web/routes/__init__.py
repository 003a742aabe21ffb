"""The HTTP routes, one ``APIRouter`` per area: pages, the rooms API, the records API, operations."""
