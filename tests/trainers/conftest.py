"""Fixtures shared by the trainer tests (tests/trainers/); the session-wide ones (`tiny`, `data`) are in
tests/conftest.py."""
import pytest
from trainer_kw import base_kw  # tests/trainers/ is on sys.path (pytest's rootdir-less import)


@pytest.fixture(scope="session")
def sft_adapter(tiny, data, tmp_path_factory):
    """An SFT adapter trained hard enough (lr 1e-2) that the SFT model differs from the base; read-only
    (runs start from it with init_adapter=)."""
    from trainers import sft
    from trainers.core.config import make

    out = tmp_path_factory.mktemp("sft")
    return sft.train(make(sft.Config, **base_kw(tiny, data, out, max_steps=3, learning_rate=1e-2)))["adapter"]


@pytest.fixture
def one_thread():
    """torch on one thread for the test, as each torchrun process (OMP_NUM_THREADS=1): summation order
    changes with the thread count, and AdamW turns a 1e-7 change of a near-zero gradient into up to 1%
    of a step. Modules that compare against a launched run use it for every test:
    `pytestmark = pytest.mark.usefixtures("one_thread")`."""
    torch = pytest.importorskip("torch")
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)
