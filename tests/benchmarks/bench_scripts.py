"""The scripts of benchmarks/ (not a package) as modules, for the tests that check them."""
from script_loader import loader  # tests/ is on sys.path (pytest's rootdir-less import)

load = loader("benchmarks")
