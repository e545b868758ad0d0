"""The single pint UnitRegistry for the whole r3bench project.

``ureg`` and ``Q_`` are created lazily on first attribute access (or via
:func:`get_ureg`), so importing this module is cheap.  Offset temperatures
(degC, degF) are auto-converted to kelvin when they take part in arithmetic;
use :func:`to_absolute` to compare temperatures as absolute values.
"""
from __future__ import annotations

import threading

_LOCK = threading.Lock()
_UREG = None

_EXTRA_DEFINITIONS = (
    # pint already knows eV, atm, mmHg, bar, cal, kWh, angstrom, gauss, L, ohm.
    "Ω = ohm",
    "Å = angstrom",
    "ångström = angstrom",
    "amu = atomic_mass_constant",
    "torr_ = torr",
    "lightyear_ = light_year",
    # pint's `gauss` is the CGS-Gaussian unit (mass^0.5 length^-0.5 time^-1); physics answers mean
    # 1 G = 1e-4 T.  The checker rewrites the words gauss/Gs to this unit.
    "gauss_si = 1e-4 * tesla",
    # "2 rev/s": a revolution, 2π rad (pint knows `revolution` and `turn`, not the short form)
    "rev = revolution",
)


def get_ureg():
    """Return the process-wide registry, creating it once."""
    global _UREG
    if _UREG is None:
        with _LOCK:
            if _UREG is None:
                import pint

                reg = pint.UnitRegistry(autoconvert_offset_to_baseunit=True)
                for line in _EXTRA_DEFINITIONS:
                    try:
                        reg.define(line)
                    except (pint.errors.RedefinitionError, pint.errors.DefinitionSyntaxError, ValueError):
                        pass  # already defined in this pint version
                _UREG = reg
    return _UREG


def to_absolute(q):
    """Convert offset temperatures (degC/degF) to kelvin; other quantities unchanged."""
    reg = get_ureg()
    try:
        if q.dimensionality == reg.kelvin.dimensionality:
            return q.to(reg.kelvin)
    except (AttributeError, TypeError, ValueError, ArithmeticError):  # not a quantity / no conversion
        pass
    return q


def __getattr__(name):
    if name == "ureg":
        return get_ureg()
    if name == "Q_":
        return get_ureg().Quantity
    raise AttributeError(name)
