"""PDE families: what a prompt states, how hidden instances are drawn, and the reference solutions.

Each `Family` holds
  - `statement` / `signature`: the text of the prompt (the PDE, its inputs, the required function;
    no method is prescribed);
  - `instance(rng)`: one hidden instance (grid resolution, output times, parameters, initial and
    boundary data vary), plain lists and floats so that it travels into the sandbox as JSON;
  - `reference(inst)`: r3bench's own solution on the instance's output grid: the exact solution
    where one exists (advection, heat, advection-diffusion, the KdV soliton), otherwise a fine-grid run of a trusted
    scheme sampled back to the output grid (tests check these by self-convergence and against
    exact/manufactured solutions);
  - `residual(u, inst)`: rho(u), the RMS of a discrete residual of the PDE on the output grid (time
    derivative by differences between consecutive output times, trapezoidal in time; the 5-point
    operator for Darcy); the hybrid verifier compares rho(u_hat) with rho(u_ref).

Seen families (training + evaluation): advection, burgers, reaction_diffusion, diffusion_sorption,
darcy, reaction_diffusion_2d. Held-out families (evaluation only, never in training prompts): heat,
advection_diffusion, kdv. Instances are small (<= 128 points x 11 times in 1D, 33 x 33 steady or
32 x 32 x 11 in 2D) so a sandboxed run stays under a second.
"""
from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

TWO_PI = 2.0 * np.pi


# ------------------------------------------------------------------------------- shared helpers

def _periodic_grid(nx):
    return np.arange(nx) / nx


def _sine_series(rng, kmax=3, amp=1.0):
    """(k, a, phase) triples of a random band-limited periodic function on [0, 1)."""
    ks = list(range(1, kmax + 1))
    return [(k, float(amp * rng.uniform(0.3, 1.0) / k), float(rng.uniform(0, TWO_PI))) for k in ks]


def _eval_series(modes, x, shift=0.0, decay=None, offset=0.0):
    u = np.full_like(np.asarray(x, float), offset)
    for k, a, p in modes:
        d = 1.0 if decay is None else np.exp(-decay * (TWO_PI * k) ** 2)
        u = u + a * d * np.sin(TWO_PI * k * (x - shift) + p)
    return u


def _times(rng, t_lo, t_hi):
    T = float(round(rng.uniform(t_lo, t_hi), 3))
    nt = int(rng.choice([5, 6, 9, 11]))
    return np.linspace(0.0, T, nt)


def _dx_periodic(u, dx):
    return (np.roll(u, -1, axis=-1) - np.roll(u, 1, axis=-1)) / (2 * dx)


def _dxx_periodic(u, dx):
    return (np.roll(u, -1, axis=-1) - 2 * u + np.roll(u, 1, axis=-1)) / dx ** 2


def _time_residual(u, t, rhs):
    """RMS of (u^{n+1} - u^n)/dt - (F(u^{n+1}) + F(u^n))/2 over all output intervals and points."""
    u = np.asarray(u, float)
    dt = np.diff(t)[:, None]
    F = rhs(u)
    r = (u[1:] - u[:-1]) / dt - 0.5 * (F[1:] + F[:-1])
    return float(np.sqrt(np.mean(r ** 2)))


# -------------------------------------------------------------------------------- the families

@dataclass(frozen=True)
class Family:
    name: str
    seen: bool
    title: str
    statement: str  # the PDE, domain, initial/boundary conditions (prompt text)
    signature: str  # the required function (prompt text)
    instance: Callable  # rng -> dict (args: the solver's keyword arguments; shape: the expected output shape)
    reference: Callable  # inst -> ndarray of inst["shape"]
    residual: Callable | None = None  # (u, inst) -> float
    params: tuple = field(default=())  # names of the scalar parameters in args


def _args(inst):
    return {k: (np.asarray(v, float) if isinstance(v, list) else v) for k, v in inst["args"].items()}


# 1D advection: u_t + beta u_x = 0 on [0, 1) periodic; exact solution u0(x - beta t).
def _adv_instance(rng):
    nx = int(rng.choice([32, 48, 64]))
    x = _periodic_grid(nx)
    t = _times(rng, 0.3, 1.0)
    beta = float(round(rng.uniform(0.1, 1.0), 3))
    modes = _sine_series(rng, kmax=3)
    return {"args": {"u0": _eval_series(modes, x).tolist(), "x": x.tolist(), "t": t.tolist(), "beta": beta},
            "shape": [len(t), nx], "modes": modes}


def _adv_reference(inst):
    a = _args(inst)
    return np.stack([_eval_series(inst["modes"], a["x"], shift=a["beta"] * tt) for tt in a["t"]])


def _adv_residual(u, inst):
    a = _args(inst)
    dx = a["x"][1] - a["x"][0]
    return _time_residual(u, a["t"], lambda v: -a["beta"] * _dx_periodic(v, dx))


# 1D heat (held out): u_t = nu u_xx periodic; exact Fourier decay.
def _heat_instance(rng):
    nx = int(rng.choice([32, 48, 64]))
    x = _periodic_grid(nx)
    t = _times(rng, 0.2, 1.0)
    nu = float(round(rng.uniform(0.002, 0.02), 4))
    modes = _sine_series(rng, kmax=3)
    return {"args": {"u0": _eval_series(modes, x).tolist(), "x": x.tolist(), "t": t.tolist(), "nu": nu},
            "shape": [len(t), nx], "modes": modes}


def _heat_reference(inst):
    a = _args(inst)
    return np.stack([_eval_series(inst["modes"], a["x"], decay=a["nu"] * tt) for tt in a["t"]])


def _heat_residual(u, inst):
    a = _args(inst)
    dx = a["x"][1] - a["x"][0]
    return _time_residual(u, a["t"], lambda v: a["nu"] * _dxx_periodic(v, dx))


# 1D advection-diffusion (held out): u_t + beta u_x = nu u_xx periodic; exact.
def _ad_instance(rng):
    inst = _heat_instance(rng)
    inst["args"]["beta"] = float(round(rng.uniform(0.1, 1.0), 3))
    return inst


def _ad_reference(inst):
    a = _args(inst)
    return np.stack([_eval_series(inst["modes"], a["x"], shift=a["beta"] * tt, decay=a["nu"] * tt) for tt in a["t"]])


def _ad_residual(u, inst):
    a = _args(inst)
    dx = a["x"][1] - a["x"][0]
    return _time_residual(u, a["t"], lambda v: a["nu"] * _dxx_periodic(v, dx) - a["beta"] * _dx_periodic(v, dx))


# 1D viscous Burgers: u_t + (u^2/2)_x = nu u_xx periodic. Reference: pseudo-spectral (2/3 dealiased)
# integrating-factor RK4 on a fine grid; tests check it against the Cole-Hopf solution.
def _burgers_instance(rng):
    nx = int(rng.choice([32, 48, 64]))
    x = _periodic_grid(nx)
    t = _times(rng, 0.3, 1.0)
    nu = float(round(rng.uniform(0.01, 0.05), 4))
    modes = _sine_series(rng, kmax=2, amp=0.5)
    return {"args": {"u0": _eval_series(modes, x).tolist(), "x": x.tolist(), "t": t.tolist(), "nu": nu},
            "shape": [len(t), nx], "modes": modes}


def burgers_spectral(u0_fine, t, nu, dt_max=None):
    """IF-RK4 pseudo-spectral Burgers on the periodic grid of u0_fine; returns (len(t), n)."""
    n = len(u0_fine)
    k = TWO_PI * np.fft.rfftfreq(n, d=1.0 / n)
    dealias = np.abs(np.fft.rfftfreq(n, d=1.0 / n)) < n / 3
    L = -nu * k ** 2

    def N(v_hat):
        v = np.fft.irfft(v_hat, n)
        return -0.5j * k * np.fft.rfft(v * v) * dealias

    out = [np.array(u0_fine, float)]
    u_hat = np.fft.rfft(u0_fine)
    umax = max(np.max(np.abs(u0_fine)), 1e-3)
    dt_cfl = 0.4 / (n * umax) if dt_max is None else dt_max
    for t0, t1 in zip(t[:-1], t[1:]):
        steps = max(1, int(np.ceil((t1 - t0) / dt_cfl)))
        h = (t1 - t0) / steps
        E, E2 = np.exp(L * h), np.exp(L * h / 2)
        for _ in range(steps):
            a = h * N(u_hat)
            b = h * N(E2 * (u_hat + a / 2))
            c = h * N(E2 * u_hat + b / 2)
            d = h * N(E * u_hat + E2 * c)
            u_hat = E * u_hat + (E * a + 2 * E2 * (b + c) + d) / 6
        out.append(np.fft.irfft(u_hat, n))
    return np.stack(out)


def _burgers_reference(inst, n_fine=384):
    a = _args(inst)
    nx = len(a["x"])
    uf = burgers_spectral(_eval_series(inst["modes"], _periodic_grid(n_fine)), a["t"], a["nu"])
    return np.stack([_fourier_sample(row, nx) for row in uf])


def _fourier_sample(u_fine, nx):
    """Values at arange(nx)/nx of the trigonometric interpolant of periodic fine samples."""
    n = len(u_fine)
    if n % nx == 0:
        return np.asarray(u_fine)[:: n // nx].copy()
    U = np.fft.fft(u_fine) / n
    k = np.fft.fftfreq(n, d=1.0 / n)
    x = _periodic_grid(nx)
    return np.real(np.exp(1j * TWO_PI * np.outer(x, k)) @ U)


def _burgers_residual(u, inst):
    a = _args(inst)
    dx = a["x"][1] - a["x"][0]
    return _time_residual(u, a["t"], lambda v: a["nu"] * _dxx_periodic(v, dx) - _dx_periodic(0.5 * v * v, dx))


# 1D reaction-diffusion (Fisher-KPP): u_t = nu u_xx + rho u (1 - u) periodic. Reference: Strang
# splitting (exact Fourier diffusion, exact logistic reaction) on a fine grid with small steps.
def _rd_instance(rng):
    nx = int(rng.choice([32, 48, 64]))
    x = _periodic_grid(nx)
    t = _times(rng, 0.3, 1.0)
    nu = float(round(rng.uniform(0.001, 0.01), 4))
    rho = float(round(rng.uniform(0.5, 3.0), 3))
    modes = _sine_series(rng, kmax=3, amp=0.2)
    return {"args": {"u0": _eval_series(modes, x, offset=0.5).tolist(), "x": x.tolist(), "t": t.tolist(),
                     "nu": nu, "rho": rho}, "shape": [len(t), nx], "modes": modes}


def rd_strang(u0_fine, t, nu, rho, dt=2e-3):
    n = len(u0_fine)
    k = TWO_PI * np.fft.rfftfreq(n, d=1.0 / n)

    def react(u, h):
        e = np.exp(rho * h)
        return u * e / (1.0 - u + u * e)

    u = np.array(u0_fine, float)
    out = [u.copy()]
    for t0, t1 in zip(t[:-1], t[1:]):
        steps = max(1, int(np.ceil((t1 - t0) / dt)))
        h = (t1 - t0) / steps
        D = np.exp(-nu * k ** 2 * h)
        for _ in range(steps):
            u = react(u, h / 2)
            u = np.fft.irfft(D * np.fft.rfft(u), n)
            u = react(u, h / 2)
        out.append(u.copy())
    return np.stack(out)


def _rd_reference(inst, n_fine=192, dt=2e-3):
    a = _args(inst)
    nx = len(a["x"])
    uf = rd_strang(_eval_series(inst["modes"], _periodic_grid(n_fine), offset=0.5), a["t"], a["nu"], a["rho"], dt)
    return np.stack([_fourier_sample(row, nx) for row in uf])


def _rd_residual(u, inst):
    a = _args(inst)
    dx = a["x"][1] - a["x"][0]
    return _time_residual(u, a["t"], lambda v: a["nu"] * _dxx_periodic(v, dx) + a["rho"] * v * (1 - v))


# 1D diffusion-sorption: u_t = D u_xx / R(u), R(u) = 1 + kappa * nf * (max(u, 0) + 1e-2)^(nf - 1),
# nf = 0.874 (Freundlich, after PDEBench), x in [0, 1] nodes, u(0, t) = 1, u_x(1, t) = 0.
# Reference: method of lines on a fine grid (second-order FD, ghost node at x = 1) integrated by
# scipy's BDF with tight tolerances and a banded Jacobian.
NF = 0.874


def _ds_instance(rng):
    nx = int(rng.choice([33, 49, 65]))
    x = np.linspace(0.0, 1.0, nx)
    t = _times(rng, 0.2, 0.6)
    D = float(round(rng.uniform(0.1, 0.5), 3))
    kappa = float(round(rng.uniform(0.5, 2.0), 3))
    a0, b0 = float(rng.uniform(0.0, 0.2)), float(rng.uniform(-0.2, 0.2))
    return {"args": {"u0": _ds_u0(x, a0, b0).tolist(), "x": x.tolist(), "t": t.tolist(), "D": D, "kappa": kappa},
            "shape": [len(t), nx], "ab": [a0, b0]}


def _ds_u0(x, a0, b0):
    return a0 + (1 - a0) * (1 - x) ** 2 + b0 * np.sin(np.pi * x) ** 2


def _ds_R(u, kappa):
    return 1.0 + kappa * NF * (np.maximum(u, 0.0) + 1e-2) ** (NF - 1.0)


def ds_mol(u0, t, D, kappa, rtol=1e-9, atol=1e-11):
    from scipy.integrate import solve_ivp
    from scipy.sparse import diags

    n = len(u0)
    dx = 1.0 / (n - 1)

    def f(_, v):
        u = np.concatenate([[1.0], v])
        lap = np.empty_like(v)
        lap[:-1] = (u[2:] - 2 * u[1:-1] + u[:-2]) / dx ** 2
        lap[-1] = 2 * (u[-2] - u[-1]) / dx ** 2
        return D * lap / _ds_R(v, kappa)

    m = n - 1
    sparsity = diags([1.0, 1.0, 1.0], [-1, 0, 1], shape=(m, m))
    sol = solve_ivp(f, (t[0], t[-1]), np.asarray(u0[1:], float), method="BDF", t_eval=t, rtol=rtol, atol=atol,
                    jac_sparsity=sparsity)
    if not sol.success:
        raise RuntimeError(f"diffusion-sorption reference failed: {sol.message}")
    out = np.vstack([np.ones((1, len(t))), sol.y]).T
    out[0] = u0
    return out


def _ds_reference(inst, refine=4):
    a = _args(inst)
    nx = len(a["x"])
    nf = refine * (nx - 1) + 1
    uf = ds_mol(_ds_u0(np.linspace(0, 1, nf), *inst["ab"]), a["t"], a["D"], a["kappa"])
    return uf[:, ::refine]


def _ds_residual(u, inst):
    a = _args(inst)
    dx = a["x"][1] - a["x"][0]

    def rhs(v):
        lap = np.zeros_like(v)
        lap[:, 1:-1] = (v[:, 2:] - 2 * v[:, 1:-1] + v[:, :-2]) / dx ** 2
        lap[:, -1] = 2 * (v[:, -2] - v[:, -1]) / dx ** 2
        return a["D"] * lap / _ds_R(v, a["kappa"])
    return _time_residual(np.asarray(u)[:, 1:], a["t"], lambda v: rhs(np.hstack([np.ones((len(v), 1)), v]))[:, 1:])


# 2D Darcy flow: -div(a grad u) = f on [0, 1]^2, u = 0 on the boundary, nodes x_i = y_i = i/(n-1).
# a(x, y) = exp(sum c_jk cos(j pi x) cos(k pi y)) is smooth; f is a constant. Reference: the 5-point
# scheme (arithmetic face means of the exact a) on a grid 4x finer, sparse direct solve, sampled back.
def _darcy_instance(rng):
    n = int(rng.choice([25, 29, 33]))
    c = (rng.normal(0, 0.3, size=(3, 3))).round(3).tolist()
    f = float(round(rng.uniform(1.0, 10.0), 2))
    x = np.linspace(0, 1, n)
    return {"args": {"a": _darcy_a(x, c).tolist(), "f": f, "x": x.tolist()}, "shape": [n, n], "c": c}


def _darcy_a(x, c):
    X, Y = np.meshgrid(x, x, indexing="ij")
    s = np.zeros_like(X)
    for j in range(3):
        for k in range(3):
            s += c[j][k] * np.cos(j * np.pi * X) * np.cos(k * np.pi * Y)
    return np.exp(s)


def darcy_fd(a, f):
    """5-point solve of -div(a grad u) = f, u = 0 on the boundary; a and f (a constant or an array) on
    the (n, n) nodes."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.linalg import spsolve

    a = np.asarray(a, float)
    n = a.shape[0]
    h = 1.0 / (n - 1)
    m = n - 2
    idx = -np.ones((n, n), dtype=int)
    idx[1:-1, 1:-1] = np.arange(m * m).reshape(m, m)
    rows, cols, vals = [], [], []
    I, J = np.meshgrid(np.arange(1, n - 1), np.arange(1, n - 1), indexing="ij")
    I, J = I.ravel(), J.ravel()
    p = idx[I, J]
    diag = np.zeros(m * m)
    for di, dj in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        w = 0.5 * (a[I, J] + a[I + di, J + dj]) / h ** 2
        diag += w
        q = idx[I + di, J + dj]
        keep = q >= 0
        rows.append(p[keep]), cols.append(q[keep]), vals.append(-w[keep])
    rows.append(p), cols.append(p), vals.append(diag)
    A = coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(m * m, m * m)).tocsr()
    u = np.zeros((n, n))
    u[1:-1, 1:-1] = spsolve(A, np.broadcast_to(np.asarray(f, float), (n, n))[1:-1, 1:-1].ravel()).reshape(m, m)
    return u


def _darcy_reference(inst, refine=4):
    n = inst["shape"][0]
    nf = refine * (n - 1) + 1
    uf = darcy_fd(_darcy_a(np.linspace(0, 1, nf), inst["c"]), inst["args"]["f"])
    return uf[::refine, ::refine]


def _darcy_residual(u, inst):
    a = np.asarray(inst["args"]["a"], float)
    u = np.asarray(u, float)
    n = a.shape[0]
    h = 1.0 / (n - 1)
    c = slice(1, -1)
    r = np.zeros((n - 2, n - 2))
    for di, dj in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        sl = (slice(1 + di, n - 1 + di), slice(1 + dj, n - 1 + dj))
        r += 0.5 * (a[c, c] + a[sl]) * (u[c, c] - u[sl]) / h ** 2
    r -= inst["args"]["f"]
    return float(np.sqrt(np.mean(r ** 2)))


# 2D reaction-diffusion (Fisher-KPP): u_t = nu (u_xx + u_yy) + rho u (1 - u) on [0, 1)^2 periodic.
# Reference: 2D Strang splitting (exact Fourier diffusion, exact logistic) on a 96 x 96 grid, sampled back.
def _rd2_instance(rng):
    n = int(rng.choice([16, 24, 32]))
    x = _periodic_grid(n)
    t = _times(rng, 0.3, 1.0)
    nu = float(round(rng.uniform(0.001, 0.005), 4))
    rho = float(round(rng.uniform(0.5, 3.0), 3))
    modes = [(int(kx), int(ky), float(rng.uniform(0.05, 0.12)), float(rng.uniform(0, TWO_PI)))
             for kx, ky in rng.choice([(1, 0), (0, 1), (1, 1), (1, -1), (2, 0), (0, 2), (2, 1), (1, 2)], 3,
                                      replace=False)]
    return {"args": {"u0": _rd2_u0(x, modes).tolist(), "x": x.tolist(), "t": t.tolist(), "nu": nu, "rho": rho},
            "shape": [len(t), n, n], "modes": modes}


def _rd2_u0(x, modes):
    X, Y = np.meshgrid(x, x, indexing="ij")
    u = np.full_like(X, 0.5)
    for kx, ky, a, p in modes:
        u += a * np.sin(TWO_PI * (kx * X + ky * Y) + p)
    return u


def rd2_strang(u0, t, nu, rho, dt=2e-3):
    n = u0.shape[0]
    k = TWO_PI * np.fft.fftfreq(n, d=1.0 / n)
    kr = TWO_PI * np.fft.rfftfreq(n, d=1.0 / n)
    K2 = k[:, None] ** 2 + kr[None, :] ** 2

    def react(u, h):
        e = np.exp(rho * h)
        return u * e / (1.0 - u + u * e)

    u = np.array(u0, float)
    out = [u.copy()]
    for t0, t1 in zip(t[:-1], t[1:]):
        steps = max(1, int(np.ceil((t1 - t0) / dt)))
        h = (t1 - t0) / steps
        D = np.exp(-nu * K2 * h)
        for _ in range(steps):
            u = react(u, h / 2)
            u = np.fft.irfft2(D * np.fft.rfft2(u), s=u.shape)
            u = react(u, h / 2)
        out.append(u.copy())
    return np.stack(out)


def _rd2_reference(inst, n_fine=96):
    a = _args(inst)
    n = len(a["x"])
    uf = rd2_strang(_rd2_u0(_periodic_grid(n_fine), inst["modes"]), a["t"], a["nu"], a["rho"])
    r = n_fine // n
    return uf[:, ::r, ::r]


def _rd2_residual(u, inst):
    a = _args(inst)
    dx = a["x"][1] - a["x"][0]

    def rhs(v):
        lap = (np.roll(v, 1, -1) + np.roll(v, -1, -1) + np.roll(v, 1, -2) + np.roll(v, -1, -2) - 4 * v) / dx ** 2
        return a["nu"] * lap + a["rho"] * v * (1 - v)
    u = np.asarray(u, float)
    dt = np.diff(a["t"])[:, None, None]
    F = rhs(u)
    res = (u[1:] - u[:-1]) / dt - 0.5 * (F[1:] + F[:-1])
    return float(np.sqrt(np.mean(res ** 2)))


# 1D KdV (held out): u_t + 6 u u_x + u_xxx = 0 on [0, L) periodic; exact single soliton
# u = c/2 sech^2(sqrt(c)/2 (x - x0 - c t)) (periodic image nearest to x; on L = 40 the tails are < 1e-6).
def _kdv_instance(rng):
    nx = int(rng.choice([64, 96, 128]))
    L = 40.0
    x = np.arange(nx) * L / nx
    t = _times(rng, 1.0, 4.0)
    c = float(round(rng.uniform(0.5, 1.5), 3))
    x0 = float(round(rng.uniform(0, L), 3))
    inst = {"args": {"x": x.tolist(), "t": t.tolist(), "L": L}, "shape": [len(t), nx], "soliton": [c, x0]}
    inst["args"] = {"u0": _kdv_exact(x, 0.0, c, x0, L).tolist(), **inst["args"]}
    return inst


def _kdv_exact(x, t, c, x0, L):
    d = np.mod(np.asarray(x) - x0 - c * t + L / 2, L) - L / 2
    return 0.5 * c / np.cosh(0.5 * np.sqrt(c) * d) ** 2


def _kdv_reference(inst):
    a = _args(inst)
    c, x0 = inst["soliton"]
    return np.stack([_kdv_exact(a["x"], tt, c, x0, a["L"]) for tt in a["t"]])


def _kdv_residual(u, inst):
    a = _args(inst)
    dx = a["x"][1] - a["x"][0]

    def rhs(v):
        r = lambda k: np.roll(v, -k, axis=-1)
        uxxx = (r(2) - 2 * r(1) + 2 * r(-1) - r(-2)) / (2 * dx ** 3)
        return -6 * v * _dx_periodic(v, dx) - uxxx
    return _time_residual(u, a["t"], rhs)


_T1D = ("`t` is a 1D array of output times with t[0] = 0; return a NumPy array of shape (len(t), len(x)) whose "
        "row n is u(x, t[n]) on the grid `x` (row 0 is the initial condition).")
_PER = ("x in [0, 1) with periodic boundary conditions; the grid is x_j = j / len(x) (given as `x`), and `u0` "
        "holds the initial condition u(x_j, 0).")

FAMILIES: dict[str, Family] = {f.name: f for f in (
    Family("advection", True, "1D linear advection",
           "u_t + beta * u_x = 0 for " + _PER + " beta > 0 is a constant.",
           "def solve(u0, x, t, beta):", _adv_instance, _adv_reference, _adv_residual, ("beta",)),
    Family("burgers", True, "1D viscous Burgers",
           "u_t + (u^2 / 2)_x = nu * u_xx for " + _PER + " nu > 0 is the viscosity.",
           "def solve(u0, x, t, nu):", _burgers_instance, _burgers_reference, _burgers_residual, ("nu",)),
    Family("reaction_diffusion", True, "1D reaction-diffusion (Fisher-KPP)",
           "u_t = nu * u_xx + rho * u * (1 - u) for " + _PER + " nu > 0 is the diffusivity and rho > 0 the "
           "reaction rate.",
           "def solve(u0, x, t, nu, rho):", _rd_instance, _rd_reference, _rd_residual, ("nu", "rho")),
    Family("diffusion_sorption", True, "1D diffusion-sorption",
           "u_t = D * u_xx / R(u) with retardation factor R(u) = 1 + kappa * nf * (max(u, 0) + 0.01)**(nf - 1), "
           "nf = 0.874, for x in [0, 1] on the uniform grid `x` (x[0] = 0, x[-1] = 1, endpoints included), with "
           "boundary conditions u(0, t) = 1 (Dirichlet) and u_x(1, t) = 0 (Neumann); `u0` holds u(x, 0). "
           "D > 0 and kappa > 0 are constants.",
           "def solve(u0, x, t, D, kappa):", _ds_instance, _ds_reference, _ds_residual, ("D", "kappa")),
    Family("darcy", True, "2D steady Darcy flow",
           "-div(a(x, y) grad u) = f on the unit square [0, 1]^2 with u = 0 on the boundary. The nodes are "
           "x_i = y_i = x[i] (uniform, endpoints included); `a` is a 2D array with a[i, j] = a(x[i], y[j]) > 0 (a "
           "smooth permeability field) and `f` is a constant source. Return a NumPy array of shape (len(x), len(x)) "
           "with u[i, j] = u(x[i], y[j]) (boundary rows and columns included, equal to 0).",
           "def solve(a, f, x):", _darcy_instance, _darcy_reference, _darcy_residual, ("f",)),
    Family("reaction_diffusion_2d", True, "2D reaction-diffusion (Fisher-KPP)",
           "u_t = nu * (u_xx + u_yy) + rho * u * (1 - u) for (x, y) in [0, 1)^2 with periodic boundary conditions; "
           "the grid is x_i = y_i = i / len(x) (given as `x`, the same for both axes), and `u0` is a 2D array with "
           "u0[i, j] = u(x_i, y_j, 0). nu > 0 is the diffusivity and rho > 0 the reaction rate. `t` is a 1D array of "
           "output times with t[0] = 0; return a NumPy array of shape (len(t), len(x), len(x)) whose entry [n, i, j] "
           "is u(x_i, y_j, t[n]) (entry [0] is the initial condition).",
           "def solve(u0, x, t, nu, rho):", _rd2_instance, _rd2_reference, _rd2_residual, ("nu", "rho")),
    Family("heat", False, "1D heat equation",
           "u_t = nu * u_xx for " + _PER + " nu > 0 is the diffusivity.",
           "def solve(u0, x, t, nu):", _heat_instance, _heat_reference, _heat_residual, ("nu",)),
    Family("advection_diffusion", False, "1D advection-diffusion",
           "u_t + beta * u_x = nu * u_xx for " + _PER + " beta > 0 is the velocity and nu > 0 the diffusivity.",
           "def solve(u0, x, t, beta, nu):", _ad_instance, _ad_reference, _ad_residual, ("beta", "nu")),
    Family("kdv", False, "1D Korteweg-de Vries",
           "u_t + 6 * u * u_x + u_xxx = 0 for x in [0, L) with periodic boundary conditions; the grid is "
           "x_j = j * L / len(x) (given as `x`, with the period `L`), and `u0` holds the initial condition u(x_j, 0).",
           "def solve(u0, x, t, L):", _kdv_instance, _kdv_reference, _kdv_residual, ("L",)),
)}
SEEN = tuple(n for n, f in FAMILIES.items() if f.seen)
HELD_OUT = tuple(n for n, f in FAMILIES.items() if not f.seen)
TIME_DEPENDENT_NOTE = _T1D


def instances(family: str, seed: int, n: int = 3) -> list[dict]:
    """The hidden instances of one prompt: deterministic in (family, seed)."""
    rng = np.random.default_rng([abs(hash_name(family)), int(seed)])
    return [FAMILIES[family].instance(rng) for _ in range(n)]


def hash_name(name: str) -> int:
    return sum((i + 1) * ord(c) for i, c in enumerate(name))  # stable across processes (str hash is salted)


@functools.lru_cache(maxsize=512)
def _reference_cached(family: str, key: str) -> np.ndarray:
    u = np.asarray(FAMILIES[family].reference(json.loads(key)), float)
    u.setflags(write=False)
    return u


def reference(family: str, inst: dict) -> np.ndarray:
    """The reference solution of one instance (cached by the instance's content)."""
    return _reference_cached(family, json.dumps(inst, sort_keys=True))
