"""benchmarks/throughput.py measures each trainer in a child process that calls the trainer's `build`
directly. The trainers set glibc's malloc threshold in `run_training`, before `build`, so the children
measured peaks under a malloc setting no trainer runs with (stepfix 15.4 GB, DPO 10.3 GB) until the
child applied the trainers' default itself."""

import pytest

import bench_scripts  # tests/benchmarks/ is on sys.path (pytest's rootdir-less import)


@pytest.fixture(scope="module")
def throughput():
    return bench_scripts.load("throughput", "r3_throughput_bench")


@pytest.fixture
def calls(monkeypatch):
    from trainers.core import memory

    seen = []
    monkeypatch.setattr(memory, "set_mmap_threshold", lambda n: seen.append(n) or True)
    return seen


class _Stop(Exception):
    pass


def _child(throughput, monkeypatch, argv):
    """Run main() as a child up to the point where it would measure; return the malloc threshold in force."""
    got = {}

    def fake(a, work):
        got["threshold_arg"] = a.malloc_mmap_threshold
        raise _Stop

    monkeypatch.setattr(throughput, "child_sft", fake)
    with pytest.raises(_Stop):
        throughput.main(["--child", "sft", "--work", "unused", *argv])
    return got["threshold_arg"]


def test_a_child_applies_the_trainers_malloc_default(throughput, calls, monkeypatch):
    from trainers.core.config import BaseConfig

    assert _child(throughput, monkeypatch, []) == BaseConfig().malloc_mmap_threshold == 1 << 20
    assert calls == [1 << 20]


def test_a_child_with_threshold_0_keeps_glibcs_default(throughput, calls, monkeypatch):
    assert _child(throughput, monkeypatch, ["--malloc_mmap_threshold", "0"]) == 0
    assert calls == []


def test_the_summary_says_which_malloc_setting_ran(throughput, tmp_path):
    meta = {"argv": "", "git_commit": "0" * 10, "when": "now", "cpus": 2, "torch_threads": 2, "model": "m"}
    res = {"psv": {"sec_per_step": 1.0, "peak_rss_gb": 1.0, "malloc_mmap_threshold": 1 << 20,
                   "load_before": 0.1, "load_after": 0.2}}
    throughput.write_summary(tmp_path, res, meta)
    assert "malloc mmap threshold in each measurement: 1048576 bytes" in (tmp_path / "summary.md").read_text()
