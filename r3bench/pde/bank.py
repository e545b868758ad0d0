"""The solver bank: conventional NumPy/SciPy programs written for r3bench, several schemes per family.

`BANK[family][scheme]` is the source of a program that defines `solve(...)` with the family's
signature; it is what the SFT warm start learns to write (seen families only: `python -m r3bench.pde
export`), and the tests hold every one of them to success (valid, nRMSE <= 0.01) on its family's
verifier. `HELD_OUT_BANK` solves the held-out families; it only checks the verifier there and never
enters a training file.
"""
from __future__ import annotations

_FFT_HELPERS = '''
def fourier_refine(u, n_fine):
    """Band-limited interpolation of periodic samples onto n_fine points (n_fine a multiple of len(u))."""
    n = len(u)
    U = np.fft.rfft(u)
    V = np.zeros(n_fine // 2 + 1, dtype=complex)
    V[: n // 2] = U[: n // 2]
    if n % 2 == 0:
        V[n // 2] = 0.5 * U[n // 2]  # split the Nyquist mode between +k and -k
    return np.fft.irfft(V, n_fine) * (n_fine / n)
'''

ADVECTION = {
    "spectral": '''import numpy as np


def solve(u0, x, t, beta):
    """Exact transport of the trigonometric interpolant: a phase shift per Fourier mode."""
    u0, t = np.asarray(u0, float), np.asarray(t, float)
    n = len(u0)
    k = 2 * np.pi * np.fft.rfftfreq(n, d=1.0 / n)
    U = np.fft.rfft(u0)
    return np.stack([np.fft.irfft(U * np.exp(-1j * k * beta * tt), n) for tt in t])
''',
    "lax_wendroff": '''import numpy as np
''' + _FFT_HELPERS + '''

def solve(u0, x, t, beta):
    """Lax-Wendroff on a refined periodic grid (Fourier-interpolated initial data), CFL 0.8 sub-steps."""
    u0, t = np.asarray(u0, float), np.asarray(t, float)
    n = len(u0)
    r = max(1, int(np.ceil(1024 / n)))
    u = fourier_refine(u0, n * r)
    dx = 1.0 / (n * r)
    out = [u0.copy()]
    for t0, t1 in zip(t[:-1], t[1:]):
        steps = max(1, int(np.ceil(abs(beta) * (t1 - t0) / (0.8 * dx))))
        c = beta * (t1 - t0) / steps / dx
        for _ in range(steps):
            up, um = np.roll(u, -1), np.roll(u, 1)
            u = u - 0.5 * c * (up - um) + 0.5 * c * c * (up - 2 * u + um)
        out.append(u[::r].copy())
    return np.stack(out)
''',
}

BURGERS = {
    "spectral_ifrk4": '''import numpy as np
''' + _FFT_HELPERS + '''

def solve(u0, x, t, nu):
    """Pseudo-spectral (2/3 dealiasing), integrating-factor RK4 for the stiff viscous term."""
    u0, t = np.asarray(u0, float), np.asarray(t, float)
    n0 = len(u0)
    r = max(1, int(np.ceil(256 / n0)))
    n = n0 * r
    u_hat = np.fft.rfft(fourier_refine(u0, n))
    k = 2 * np.pi * np.fft.rfftfreq(n, d=1.0 / n)
    keep = np.fft.rfftfreq(n, d=1.0 / n) < n / 3
    L = -nu * k ** 2

    def N(v_hat):
        v = np.fft.irfft(v_hat, n)
        return -0.5j * k * np.fft.rfft(v * v) * keep

    dt_max = 0.4 / (n * max(np.max(np.abs(u0)), 1e-3))
    out = [u0.copy()]
    for t0, t1 in zip(t[:-1], t[1:]):
        steps = max(1, int(np.ceil((t1 - t0) / dt_max)))
        h = (t1 - t0) / steps
        E, E2 = np.exp(L * h), np.exp(L * h / 2)
        for _ in range(steps):
            a = h * N(u_hat)
            b = h * N(E2 * (u_hat + a / 2))
            c = h * N(E2 * u_hat + b / 2)
            d = h * N(E * u_hat + E2 * c)
            u_hat = E * u_hat + (E * a + 2 * E2 * (b + c) + d) / 6
        out.append(np.fft.irfft(u_hat, n)[::r])
    return np.stack(out)
''',
    "fv_muscl_imex": '''import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
''' + _FFT_HELPERS + '''

def solve(u0, x, t, nu):
    """Finite volumes: MUSCL (minmod-limited) reconstruction with the Rusanov flux, SSP-RK2 for the
    convection; Crank-Nicolson for the viscous term with a sparse LU factorisation (Strang split)."""
    u0, t = np.asarray(u0, float), np.asarray(t, float)
    n0 = len(u0)
    r = max(1, int(np.ceil(512 / n0)))
    n = n0 * r
    dx = 1.0 / n
    u = fourier_refine(u0, n)

    def minmod(a, b):
        return np.where(a * b > 0, np.sign(a) * np.minimum(np.abs(a), np.abs(b)), 0.0)

    def rhs(v):
        s = minmod(v - np.roll(v, 1), np.roll(v, -1) - v)
        ul, ur = v + 0.5 * s, np.roll(v - 0.5 * s, -1)  # states left/right of face i+1/2
        a = np.maximum(np.abs(ul), np.abs(ur))
        f = 0.25 * (ul ** 2 + ur ** 2) - 0.5 * a * (ur - ul)
        return -(f - np.roll(f, 1)) / dx

    lap = sp.diags([1.0, -2.0, 1.0], [-1, 0, 1], shape=(n, n), format="lil")
    lap[0, n - 1] = lap[n - 1, 0] = 1.0
    lap = lap.tocsc() / dx ** 2
    eye = sp.identity(n, format="csc")
    dt_max = 0.4 * dx / max(np.max(np.abs(u0)), 1e-3)
    out = [u0.copy()]
    for t0, t1 in zip(t[:-1], t[1:]):
        steps = max(1, int(np.ceil((t1 - t0) / dt_max)))
        h = (t1 - t0) / steps
        lu = spla.splu((eye - 0.25 * h * nu * lap).tocsc())
        B = eye + 0.25 * h * nu * lap
        for _ in range(steps):
            u = lu.solve(B @ u)
            v = u + h * rhs(u)
            u = 0.5 * (u + v + h * rhs(v))
            u = lu.solve(B @ u)
        out.append(u[::r].copy())
    return np.stack(out)
''',
}

REACTION_DIFFUSION = {
    "strang_spectral": '''import numpy as np
''' + _FFT_HELPERS + '''

def solve(u0, x, t, nu, rho):
    """Strang splitting: exact logistic reaction half steps around an exact Fourier diffusion step."""
    u0, t = np.asarray(u0, float), np.asarray(t, float)
    n0 = len(u0)
    r = max(1, int(np.ceil(128 / n0)))
    n = n0 * r
    k = 2 * np.pi * np.fft.rfftfreq(n, d=1.0 / n)
    u = fourier_refine(u0, n)

    def react(v, h):
        e = np.exp(rho * h)
        return v * e / (1.0 - v + v * e)

    out = [u0.copy()]
    for t0, t1 in zip(t[:-1], t[1:]):
        steps = max(1, int(np.ceil((t1 - t0) / 5e-3)))
        h = (t1 - t0) / steps
        D = np.exp(-nu * k ** 2 * h)
        for _ in range(steps):
            u = react(u, h / 2)
            u = np.fft.irfft(D * np.fft.rfft(u), n)
            u = react(u, h / 2)
        out.append(u[::r].copy())
    return np.stack(out)
''',
    "explicit_fd_heun": '''import numpy as np


def solve(u0, x, t, nu, rho):
    """Second-order central differences, Heun (RK2) in time with stability-limited sub-steps."""
    u, t = np.asarray(u0, float).copy(), np.asarray(t, float)
    dx = 1.0 / len(u)

    def f(v):
        return nu * (np.roll(v, -1) - 2 * v + np.roll(v, 1)) / dx ** 2 + rho * v * (1 - v)

    dt_max = min(0.4 * dx ** 2 / nu, 2e-3)
    out = [u.copy()]
    for t0, t1 in zip(t[:-1], t[1:]):
        steps = max(1, int(np.ceil((t1 - t0) / dt_max)))
        h = (t1 - t0) / steps
        for _ in range(steps):
            k1 = f(u)
            k2 = f(u + h * k1)
            u = u + 0.5 * h * (k1 + k2)
        out.append(u.copy())
    return np.stack(out)
''',
}

DIFFUSION_SORPTION = {
    "crank_nicolson_banded": '''import numpy as np
from scipy.linalg import solve_banded

NF = 0.874


def solve(u0, x, t, D, kappa):
    """Crank-Nicolson with the retardation factor at the midpoint (two Picard sweeps), a tridiagonal
    banded solve per sweep; u(0) = 1 and a ghost node for u_x(1) = 0."""
    u, t = np.asarray(u0, float).copy(), np.asarray(t, float)
    n = len(u)
    dx = 1.0 / (n - 1)
    R = lambda v: 1.0 + kappa * NF * (np.maximum(v, 0.0) + 1e-2) ** (NF - 1.0)

    def lap(v):
        w = np.concatenate([[1.0], v])
        out = np.empty_like(v)
        out[:-1] = (w[2:] - 2 * w[1:-1] + w[:-2]) / dx ** 2
        out[-1] = 2 * (w[-2] - w[-1]) / dx ** 2
        return out

    m = n - 1
    out = [u.copy()]
    v = u[1:].copy()
    for t0, t1 in zip(t[:-1], t[1:]):
        steps = max(1, int(np.ceil((t1 - t0) / 2e-3)))
        h = (t1 - t0) / steps
        for _ in range(steps):
            w = v.copy()
            for _ in range(2):
                c = 0.5 * h * D / R(0.5 * (v + w)) / dx ** 2
                ab = np.zeros((3, m))
                ab[1] = 1 + 2 * c
                ab[0, 1:] = -c[:-1]           # super-diagonal: row i, column i+1
                ab[2, :-1] = -c[1:]           # sub-diagonal: row i, column i-1
                ab[2, m - 2] = -2 * c[-1]     # ghost node: u_N = u_{N-2}
                rhs = v + c * dx ** 2 * lap(v)
                rhs[0] += c[0] * 1.0          # Dirichlet u(0) = 1 at the new time
                w = solve_banded((1, 1), ab, rhs)
            v = w
        out.append(np.concatenate([[1.0], v]))
    res = np.stack(out)
    res[0] = np.asarray(u0, float)
    return res
''',
    "explicit_fd": '''import numpy as np

NF = 0.874


def solve(u0, x, t, D, kappa):
    """Forward Euler with central differences, sub-stepped under the explicit stability limit."""
    u, t = np.asarray(u0, float).copy(), np.asarray(t, float)
    n = len(u)
    dx = 1.0 / (n - 1)
    dt_max = 0.4 * dx ** 2 / D  # R(u) >= 1, so this is within the limit
    out = [u.copy()]
    u[0] = 1.0
    for t0, t1 in zip(t[:-1], t[1:]):
        steps = max(1, int(np.ceil((t1 - t0) / dt_max)))
        h = (t1 - t0) / steps
        for _ in range(steps):
            lap = np.empty_like(u)
            lap[1:-1] = (u[2:] - 2 * u[1:-1] + u[:-2]) / dx ** 2
            lap[-1] = 2 * (u[-2] - u[-1]) / dx ** 2
            lap[0] = 0.0
            R = 1.0 + kappa * NF * (np.maximum(u, 0.0) + 1e-2) ** (NF - 1.0)
            u = u + h * D * lap / R
        out.append(u.copy())
    return np.stack(out)
''',
}

DARCY = {
    "fd5_sparse_direct": '''import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla


def solve(a, f, x):
    """Five-point finite differences (arithmetic face means of a), sparse direct solve."""
    a = np.asarray(a, float)
    n = a.shape[0]
    h = 1.0 / (n - 1)
    m = n - 2
    idx = -np.ones((n, n), dtype=int)
    idx[1:-1, 1:-1] = np.arange(m * m).reshape(m, m)
    I, J = [g.ravel() for g in np.meshgrid(np.arange(1, n - 1), np.arange(1, n - 1), indexing="ij")]
    p = idx[I, J]
    rows, cols, vals = [p], [p], []
    diag = np.zeros(m * m)
    for di, dj in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        w = 0.5 * (a[I, J] + a[I + di, J + dj]) / h ** 2
        diag += w
        q = idx[I + di, J + dj]
        inside = q >= 0
        rows.append(p[inside]), cols.append(q[inside]), vals.append(-w[inside])
    vals.insert(0, diag)
    A = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(m * m, m * m))
    u = np.zeros((n, n))
    u[1:-1, 1:-1] = spla.spsolve(A, np.full(m * m, float(f))).reshape(m, m)
    return u
''',
    "fd5_harmonic_cg": '''import numpy as np


def solve(a, f, x):
    """Five-point finite differences with harmonic face means of a, matrix-free conjugate gradients."""
    a = np.asarray(a, float)
    n = a.shape[0]
    h = 1.0 / (n - 1)
    hm = lambda p, q: 2 * p * q / (p + q)
    ax = hm(a[1:, :], a[:-1, :])  # faces between i and i+1
    ay = hm(a[:, 1:], a[:, :-1])  # faces between j and j+1

    def A(v):
        u = np.zeros((n, n))
        u[1:-1, 1:-1] = v
        fx = ax * (u[1:, :] - u[:-1, :])
        fy = ay * (u[:, 1:] - u[:, :-1])
        div = (fx[1:, 1:-1] - fx[:-1, 1:-1]) + (fy[1:-1, 1:] - fy[1:-1, :-1])
        return -div / h ** 2

    b = np.full((n - 2, n - 2), float(f))
    v = np.zeros_like(b)
    r = b - A(v)
    p = r.copy()
    rr = np.sum(r * r)
    for _ in range(10 * n * n):
        Ap = A(p)
        alpha = rr / np.sum(p * Ap)
        v += alpha * p
        r -= alpha * Ap
        rr_new = np.sum(r * r)
        if np.sqrt(rr_new) <= 1e-10 * np.sqrt(np.sum(b * b)):
            break
        p = r + (rr_new / rr) * p
        rr = rr_new
    u = np.zeros((n, n))
    u[1:-1, 1:-1] = v
    return u
''',
}

REACTION_DIFFUSION_2D = {
    "strang_spectral": '''import numpy as np


def solve(u0, x, t, nu, rho):
    """Strang splitting in 2D: exact logistic half steps around an exact Fourier diffusion step."""
    u, t = np.asarray(u0, float).copy(), np.asarray(t, float)
    n = u.shape[0]
    k = 2 * np.pi * np.fft.fftfreq(n, d=1.0 / n)
    kr = 2 * np.pi * np.fft.rfftfreq(n, d=1.0 / n)
    K2 = k[:, None] ** 2 + kr[None, :] ** 2

    def react(v, h):
        e = np.exp(rho * h)
        return v * e / (1.0 - v + v * e)

    out = [u.copy()]
    for t0, t1 in zip(t[:-1], t[1:]):
        steps = max(1, int(np.ceil((t1 - t0) / 5e-3)))
        h = (t1 - t0) / steps
        D = np.exp(-nu * K2 * h)
        for _ in range(steps):
            u = react(u, h / 2)
            u = np.fft.irfft2(D * np.fft.rfft2(u), s=u.shape)
            u = react(u, h / 2)
        out.append(u.copy())
    return np.stack(out)
''',
    "explicit_fd_heun": '''import numpy as np


def solve(u0, x, t, nu, rho):
    """Five-point Laplacian, Heun (RK2) in time with stability-limited sub-steps."""
    u, t = np.asarray(u0, float).copy(), np.asarray(t, float)
    dx = 1.0 / u.shape[0]

    def f(v):
        lap = (np.roll(v, 1, 0) + np.roll(v, -1, 0) + np.roll(v, 1, 1) + np.roll(v, -1, 1) - 4 * v) / dx ** 2
        return nu * lap + rho * v * (1 - v)

    dt_max = min(0.2 * dx ** 2 / nu, 5e-3)
    out = [u.copy()]
    for t0, t1 in zip(t[:-1], t[1:]):
        steps = max(1, int(np.ceil((t1 - t0) / dt_max)))
        h = (t1 - t0) / steps
        for _ in range(steps):
            k1 = f(u)
            k2 = f(u + h * k1)
            u = u + 0.5 * h * (k1 + k2)
        out.append(u.copy())
    return np.stack(out)
''',
}

BANK = {"advection": ADVECTION, "burgers": BURGERS, "reaction_diffusion": REACTION_DIFFUSION,
        "diffusion_sorption": DIFFUSION_SORPTION, "darcy": DARCY, "reaction_diffusion_2d": REACTION_DIFFUSION_2D}

HELD_OUT_BANK = {
    "heat": {"spectral": '''import numpy as np


def solve(u0, x, t, nu):
    u0, t = np.asarray(u0, float), np.asarray(t, float)
    n = len(u0)
    k = 2 * np.pi * np.fft.rfftfreq(n, d=1.0 / n)
    U = np.fft.rfft(u0)
    return np.stack([np.fft.irfft(U * np.exp(-nu * k ** 2 * tt), n) for tt in t])
'''},
    "advection_diffusion": {"spectral": '''import numpy as np


def solve(u0, x, t, beta, nu):
    u0, t = np.asarray(u0, float), np.asarray(t, float)
    n = len(u0)
    k = 2 * np.pi * np.fft.rfftfreq(n, d=1.0 / n)
    U = np.fft.rfft(u0)
    return np.stack([np.fft.irfft(U * np.exp((-1j * beta * k - nu * k ** 2) * tt), n) for tt in t])
'''},
    "kdv": {"spectral_ifrk4": '''import numpy as np


def solve(u0, x, t, L):
    """Pseudo-spectral KdV: integrating factor for u_xxx, RK4 for -3 (u^2)_x, 2/3 dealiasing."""
    u0, t = np.asarray(u0, float), np.asarray(t, float)
    n = len(u0)
    k = 2 * np.pi * np.fft.rfftfreq(n, d=L / n)
    keep = np.arange(len(k)) < n / 3
    lin = 1j * k ** 3

    def N(v_hat):
        v = np.fft.irfft(v_hat, n)
        return -3j * k * np.fft.rfft(v * v) * keep

    u_hat = np.fft.rfft(u0)
    out = [u0.copy()]
    dt_max = 0.2 * (L / n) / max(6 * np.max(np.abs(u0)), 1e-3)
    for t0, t1 in zip(t[:-1], t[1:]):
        steps = max(1, int(np.ceil((t1 - t0) / dt_max)))
        h = (t1 - t0) / steps
        E, E2 = np.exp(lin * h), np.exp(lin * h / 2)
        for _ in range(steps):
            a = h * N(u_hat)
            b = h * N(E2 * (u_hat + a / 2))
            c = h * N(E2 * u_hat + b / 2)
            d = h * N(E * u_hat + E2 * c)
            u_hat = E * u_hat + (E * a + 2 * E2 * (b + c) + d) / 6
        out.append(np.fft.irfft(u_hat, n))
    return np.stack(out)
'''},
}
