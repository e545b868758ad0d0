"""The single pint UnitRegistry for the whole r3bench project.

``ureg`` and ``Q_`` are created lazily on first attribute access (or via
:func:`get_ureg`), so importing this module is cheap.  Offset temperatures
(degC, degF) are auto-converted to kelvin when they take part in arithmetic;
use :func:`to_absolute` to compare temperatures as absolute values.

A dimensionality (``q.dimensionality``) lists its dimensions in sorted order, so its text is the same
whatever the process read before: pint caches a unit's dimensionality under a key that ignores the order of
the unit's factors, and builds it in the order of the first spelling it meets (``m**2*kg/s**2`` gives
``[length] ** 2 * [mass] / [time] ** 2``, ``kg*m**2/s**2`` ``[mass] * [length] ** 2 / [time] ** 2``); the
text of every later, equal unit's dimensionality was that first one's, and a verdict that compared such texts
depended on what was verified earlier in the process.
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


def _registry_class(pint):
    class _Registry(pint.UnitRegistry):
        """pint's registry whose dimensionalities keep their dimensions in sorted order (the module's doc)."""

        def _get_dimensionality(self, input_units):
            dims = super()._get_dimensionality(input_units)
            if list(dims) != sorted(dims):
                dims = self.UnitsContainer(dict(sorted(dims.items())))
                if input_units:
                    self._cache.dimensionality[input_units] = dims  # the sorted one from now on
            return dims

    return _Registry


def get_ureg():
    """Return the process-wide registry, creating it once."""
    global _UREG
    if _UREG is None:
        with _LOCK:
            if _UREG is None:
                import pint

                reg = _registry_class(pint)(autoconvert_offset_to_baseunit=True)
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
