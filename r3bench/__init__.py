"""r3bench: physics reasoning benchmarks and step-level reward RL for small language models.

The flow a problem takes (see docs/ARCHITECTURE.md):
problem -> prompt -> generation -> parse -> check / verify -> reward -> feedback -> update -> score.
"""

__version__ = "0.1.0"


def _check_top_level_names() -> None:
    """r3bench ships the top-level packages `verifiers` and `tasks` beside itself. When another
    installed distribution (PyPI has a `verifiers` and a `tasks`) owns one of these names, r3bench would
    import the wrong code and fail far from the cause: refuse here, with one message naming both places.

    Cheap (no import, one spec lookup per name). `tasks` is never imported by name (its YAML folder
    is found beside this package), so only a `tasks` installed in site-packages by another
    distribution counts, not a `tasks/` folder of the user's own project."""
    import importlib.util
    import site
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    for name in ("verifiers", "tasks"):
        ours = root / name
        if not (ours / "__init__.py").is_file():
            continue  # a partial copy of r3bench (no sibling to compare with): nothing to say
        mod = sys.modules.get(name)
        try:
            spec = getattr(mod, "__spec__", None) if mod is not None else importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        locations = list(getattr(spec, "submodule_search_locations", None) or []) if spec else []
        if spec is None or spec.origin is None and not locations:
            continue  # not found at all (or a namespace package only): r3bench's own will be imported
        where = Path(spec.origin).parent if spec.origin else Path(locations[0])
        try:
            same = where.resolve() == ours.resolve()
            if name == "tasks" and not same:  # harmful only when installed: a project's own tasks/ is not
                sites = [*site.getsitepackages(), site.getusersitepackages()] \
                    if hasattr(site, "getsitepackages") else []  # (virtualenv's old site.py lacks it)
                same = where.resolve().parent not in {Path(x).resolve() for x in sites}
        except OSError:
            same = False
        if not same:
            raise ImportError(
                f"r3bench: the top-level package {name!r} resolves to {where}, not to r3bench's own {ours}: "
                f"another installed distribution (or a folder on sys.path) owns the name. "
                f"Uninstall it (`pip show {name}` names it) or install r3bench in a virtual environment of its own.")


_check_top_level_names()
