import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The benchmark data directory: $R3BENCH_DATA_DIR, else ../shared/data beside the repo."""
    p = Path(os.environ.get("R3BENCH_DATA_DIR") or REPO.parent / "shared" / "data")
    if not p.is_dir():
        pytest.fail(f"benchmark data directory not found at {p}: set R3BENCH_DATA_DIR")
    return p
