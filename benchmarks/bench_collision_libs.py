"""Benchmark of the collision libraries that contact between general shapes could use (issue 14).

    /usr/bin/python3 benchmarks/bench_collision_libs.py [--packages DIR ...] [--quick]

``--packages DIR`` adds a folder made by ``pip install --target DIR ...`` the way the workbench
would have to: appended to ``sys.path`` (after Debian's dist-packages, as FreeCAD appends its
AdditionalPythonPackages folder) through ``site.addsitedir``, which also reads the folder's
``.pth`` files (coal's wheels, built with cmeel, put their modules in ``cmeel.prefix/`` and
need ``cmeel.pth`` read).

For each library that imports (python-fcl as ``fcl``, coal as ``coal``; one that does not is
skipped with a line saying why), prints the cost in microseconds of one pair and one query:

* sphere (radius 0.5 m) - halfspace, 10 mm overlap;
* box (1 m cube) - halfspace, lying nearly flat (tilt below 1 mrad), 10 mm overlap;
* convex hull of 200 points on a sphere (radius 0.5 m) - halfspace, 10 mm overlap;
* that convex hull - the same hull, centres 0.99 m apart (convex pieces of a decomposition);
* triangle mesh (BVH, 2000 triangles, a UV sphere of radius 0.5 m) - the same mesh, centres
  0.99 m apart (10 mm overlap), every contact asked for (at most 1000);
* sphere - that mesh, 10 mm overlap;
* coal only: the contact patch of the box on the halfspace (computeContactPatch), with the
  default patch tolerance and with 10 mm.

"query" times the library call alone with fixed poses (into a fresh result for fcl, a cleared
one for coal); "full" times what a solver step would do from Python: set both poses from numpy
arrays (3x3 rotation, 3-vector), the query, and reading every contact's depth, normal and point
into Python (coal: ``getContact(i)``; iterating over ``getContacts()`` costs about 6 us a
contact more). Poses cycle through 16 slightly different overlapping ones. For the first case
the parts of "full" are timed apart. Also: how many contacts each query returns,
the first one's depth and normal (conventions differ: fcl gives a positive depth, coal the
signed distance, negative when overlapping), the broad phase (a dynamic AABB tree of 100
spheres: update and collide), and the cost of 100 pairs per RK4 step from Python. These
calls cannot be made from inside a numba @njit loop (they are Python extension calls); the
script shows numba refusing one.

Times are the best of 5 repeats. Not a test: the figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import os
import site
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--packages", action="append", default=[],
                   help="a pip --target folder to add (site.addsitedir: appended, .pth read)")
    p.add_argument("--quick", action="store_true", help="shorter timing runs")
    return p.parse_args()


ARGS = parse_args() if __name__ == "__main__" else None
if ARGS:
    for folder in ARGS.packages:
        site.addsitedir(os.path.abspath(folder))

import numpy as np                                        # noqa: E402

sys.path.insert(0, HERE)
from bench_tree import load, machine                      # noqa: E402

R_SPHERE = 0.5          # m, sphere, convex hull and mesh radius
OVERLAP = 0.01          # m
N_POSES = 16
MAX_CONTACTS = 1000
I3 = np.eye(3)
O3 = np.zeros(3)


# ---------------------------------------------------------------------------------------------
# geometry (numpy only)

def sphere_points(n: int, r: float) -> np.ndarray:
    """n points spread over a sphere of radius r (m), a Fibonacci lattice; all are hull vertices."""
    k = np.arange(n) + 0.5
    z = 1.0 - 2.0 * k / n
    rho = np.sqrt(1.0 - z * z)
    phi = np.pi * (3.0 - np.sqrt(5.0)) * k
    return r * np.column_stack([rho * np.cos(phi), rho * np.sin(phi), z])


def hull_triangles(points: np.ndarray) -> np.ndarray:
    """Triangles (m, 3) of the convex hull of points, counter-clockwise seen from outside."""
    from scipy.spatial import ConvexHull
    hull = ConvexHull(points)
    tri = hull.simplices.copy()
    centre = points.mean(axis=0)
    for t in tri:                                       # orient outwards
        a, b, c = points[t]
        if np.dot(np.cross(b - a, c - a), a - centre) < 0:
            t[1], t[2] = t[2], t[1]
    return tri


def uv_sphere(r: float, stacks: int = 26, slices: int = 40):
    """Vertices and triangles of a UV sphere; 2 * slices * (stacks - 1) triangles (2000)."""
    verts = [(0.0, 0.0, r)]
    for i in range(1, stacks):
        th = np.pi * i / stacks
        for j in range(slices):
            ph = 2 * np.pi * j / slices
            verts.append((r * np.sin(th) * np.cos(ph), r * np.sin(th) * np.sin(ph), r * np.cos(th)))
    verts.append((0.0, 0.0, -r))
    south = len(verts) - 1

    def ring(i, j):
        return 1 + (i - 1) * slices + (j % slices)
    tris = []
    for j in range(slices):
        tris.append((0, ring(1, j), ring(1, j + 1)))
        tris.append((south, ring(stacks - 1, j + 1), ring(stacks - 1, j)))
    for i in range(1, stacks - 1):
        for j in range(slices):
            a, b, c, d = ring(i, j), ring(i, j + 1), ring(i + 1, j), ring(i + 1, j + 1)
            tris.append((a, c, b))
            tris.append((b, c, d))
    return np.array(verts), np.array(tris, dtype=np.int64)


def rotation(axis, angle: float) -> np.ndarray:
    """Rotation matrix about a unit axis by angle (rad)."""
    x, y, z = np.asarray(axis, float) / np.linalg.norm(axis)
    c, s = np.cos(angle), np.sin(angle)
    C = 1 - c
    return np.array([[c + x * x * C, x * y * C - z * s, x * z * C + y * s],
                     [y * x * C + z * s, c + y * y * C, y * z * C - x * s],
                     [z * x * C - y * s, z * y * C + x * s, c + z * z * C]])


def poses(centre, tilt: float, seed: int = 1):
    """N_POSES (R, p): centre moved by up to 0.5 mm, turned by up to ``tilt`` rad."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(N_POSES):
        R = rotation(rng.normal(size=3), tilt * rng.uniform(-1, 1))
        p = np.asarray(centre, float) + rng.uniform(-5e-4, 5e-4, 3)
        out.append((np.ascontiguousarray(R), p))
    return out


# ---------------------------------------------------------------------------------------------
# timing

def best_us(fn, quick: bool) -> float:
    """Best time of one call of fn() (microseconds) over 5 repeats of a calibrated loop."""
    t0 = time.perf_counter()
    for _ in range(5):
        fn()
    once = max((time.perf_counter() - t0) / 5, 1e-7)
    n = max(5, int((0.05 if quick else 0.2) / once))
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - t0) / n)
    return best * 1e6


# ---------------------------------------------------------------------------------------------
# the two libraries behind one small interface: shapes, a pair query, and the broad phase

class FclLib:
    name = "python-fcl"

    def __init__(self):
        import fcl
        self.m = fcl
        self.version = getattr(fcl, "__version__", "?")

    def sphere(self, r):
        return self.m.Sphere(r)

    def box(self, a):
        return self.m.Box(a, a, a)

    def halfspace(self):
        return self.m.Halfspace(np.array([0.0, 0.0, 1.0]), 0.0)

    def convex(self, pts, tri):
        faces = np.column_stack([np.full(len(tri), 3), tri]).ravel()
        return self.m.Convex(pts, len(tri), faces)

    def mesh(self, verts, tris):
        m = self.m.BVHModel()
        m.beginModel(len(verts), len(tris))
        m.addSubModel(verts, tris)
        m.endModel()
        return m

    def pair(self, g1, g2, max_contacts):
        """Callables for geometry g1 moving, g2 fixed: place(R, p) sets both poses, query()
        runs the query into a fresh result, read() returns the last result's contacts as
        (depth, normal, point)."""
        fcl = self.m
        o1 = fcl.CollisionObject(g1, fcl.Transform())
        o2 = fcl.CollisionObject(g2, fcl.Transform())
        req = fcl.CollisionRequest(num_max_contacts=max_contacts, enable_contact=True)
        last = [fcl.CollisionResult()]

        def place(R, p):
            o1.setRotation(R)
            o1.setTranslation(p)
            o2.setRotation(I3)
            o2.setTranslation(O3)

        def query():
            last[0] = res = fcl.CollisionResult()
            return fcl.collide(o1, o2, req, res)

        def read():
            return [(c.penetration_depth, c.normal, c.pos) for c in last[0].contacts]
        return place, query, read

    def broadphase(self, centres, r):
        fcl = self.m
        objs = [fcl.CollisionObject(fcl.Sphere(r), fcl.Transform(np.eye(3), c)) for c in centres]
        mgr = fcl.DynamicAABBTreeCollisionManager()
        mgr.registerObjects(objs)
        mgr.setup()

        def step(new_centres):
            for o, c in zip(objs, new_centres):
                o.setTranslation(c)
            mgr.update()
            data = fcl.CollisionData(request=fcl.CollisionRequest(num_max_contacts=1000000))
            mgr.collide(data, fcl.defaultCollisionCallback)
            return len(data.result.contacts)
        return step


class CoalLib:
    name = "coal"

    def __init__(self):
        import coal
        self.m = coal
        self.version = coal.__version__

    def sphere(self, r):
        return self.m.Sphere(r)

    def box(self, a):
        return self.m.Box(a, a, a)

    def halfspace(self):
        return self.m.Halfspace(np.array([0.0, 0.0, 1.0]), 0.0)

    def convex(self, pts, tri):
        coal = self.m
        v = coal.StdVec_Vec3s()
        v.extend(list(pts))
        t = coal.StdVec_Triangle()
        t.extend([coal.Triangle(int(a), int(b), int(c)) for a, b, c in tri])
        return coal.Convex(v, t)

    def mesh(self, verts, tris):
        m = self.m.BVHModelOBBRSS()
        m.beginModel(len(tris), len(verts))
        m.addVertices(verts)
        m.addTriangles(tris)
        m.endModel()
        return m

    def pair(self, g1, g2, max_contacts):
        """As FclLib.pair; the result is cleared and reused."""
        coal = self.m
        tf1, tf2 = coal.Transform3s(), coal.Transform3s()
        req = coal.CollisionRequest(coal.CollisionRequestFlag.CONTACT, max_contacts)
        res = coal.CollisionResult()

        def place(R, p):
            tf1.setRotation(R)
            tf1.setTranslation(p)
            tf2.setRotation(I3)
            tf2.setTranslation(O3)

        def query():
            res.clear()
            return coal.collide(g1, tf1, g2, tf2, req, res)

        def read():                                     # getContact(i): iterating over
            out = []                                    # getContacts() took 6 us a contact
            for i in range(res.numContacts()):
                c = res.getContact(i)
                out.append((c.penetration_depth, c.normal, c.pos))
            return out
        self._last = (g1, tf1, g2, tf2, req, res)
        return place, query, read

    def patch(self, plist, tolerance=None):
        """Callable: the last pair's contact patches (depth, normal, points), as ``full``;
        with the request's default patch tolerance (m) or ``tolerance``."""
        coal = self.m
        g1, tf1, g2, tf2, req, res = self._last
        preq = coal.ContactPatchRequest()
        if tolerance is not None:
            preq.setPatchTolerance(tolerance)
        self.patch_tolerance = preq.getPatchTolerance()
        pres = coal.ContactPatchResult()
        state = {"k": 0}

        def run():
            k = state["k"] = (state["k"] + 1) % len(plist)
            tf1.setRotation(plist[k][0])
            tf1.setTranslation(plist[k][1])
            tf2.setRotation(I3)
            tf2.setTranslation(O3)
            res.clear()
            coal.collide(g1, tf1, g2, tf2, req, res)
            pres.clear()
            coal.computeContactPatch(g1, tf1, g2, tf2, res, preq, pres)
            out = []
            for i in range(pres.numContactPatches()):
                cp = pres.getContactPatch(i)
                out.append((cp.penetration_depth, cp.getNormal(),
                            [cp.getPoint(j) for j in range(cp.size())]))
            return out
        return run

    def broadphase(self, centres, r):
        coal = self.m
        geom = coal.Sphere(r)
        objs = [coal.CollisionObject(geom, coal.Transform3s(np.eye(3), c)) for c in centres]
        mgr = coal.DynamicAABBTreeCollisionManager()
        for o in objs:
            mgr.registerObject(o)
        mgr.setup()
        cb = coal.CollisionCallBackDefault()
        cb.data.request.num_max_contacts = 1000000

        def step(new_centres):
            for o, c in zip(objs, new_centres):
                o.setTranslation(c)
                o.computeAABB()
            mgr.update()
            cb.data.result.clear()
            mgr.collide(cb)
            return cb.data.result.numContacts()
        return step


# ---------------------------------------------------------------------------------------------

def numba_refuses(lib) -> str:
    """What numba says when an @njit function calls the library's collide."""
    import numba
    fn = lib.m.collide

    @numba.njit
    def call_it(x):
        return fn(x)
    try:
        call_it(1.0)
    except Exception as exc:                            # numba's TypingError
        return f"{type(exc).__name__} (as expected: a Python extension call)"
    return "compiled (unexpected)"


def run_library(lib, quick: bool) -> dict:
    r = R_SPHERE
    hs = lib.halfspace()
    pts = sphere_points(200, r)
    tri = hull_triangles(pts)
    mv, mt = uv_sphere(r)
    mesh_a, mesh_b = lib.mesh(mv, mt), lib.mesh(mv, mt)
    print(f"  geometry: convex hull {len(pts)} vertices / {len(tri)} triangles; "
          f"mesh {len(mv)} vertices / {len(mt)} triangles")
    z = r - OVERLAP
    cases = [
        ("sphere-halfspace", lib.sphere(r), hs, poses([0, 0, z], 0.0), 8),
        ("box-halfspace", lib.box(2 * r), hs, poses([0, 0, z], 1e-3), 8),
        ("convex200-halfspace", lib.convex(pts, tri), hs, poses([0, 0, z - 1e-3], 1e-3), 8),
        ("convex200-convex200", lib.convex(pts, tri), lib.convex(pts, tri),
         poses([2 * r - OVERLAP, 0, 0], 2e-3), 8),
        ("mesh2000-mesh2000", mesh_a, mesh_b, poses([2 * r - OVERLAP, 0, 0], 2e-3), MAX_CONTACTS),
        ("sphere-mesh2000", lib.sphere(r), mesh_b, poses([2 * r - OVERLAP, 0, 0], 0.0),
         MAX_CONTACTS),
    ]
    figures = {}
    for name, g1, g2, plist, maxc in cases:
        place, query, read = lib.pair(g1, g2, maxc)
        state = {"k": 0}

        def full():
            k = state["k"] = (state["k"] + 1) % N_POSES
            place(*plist[k])
            query()
            return read()

        def contacts(R, p):
            place(R, p)
            query()
            return read()
        found = contacts(*plist[0])
        t_query = best_us(query, quick)
        t_full = best_us(full, quick)
        counts = [len(contacts(R, p)) for R, p in plist]
        if name == "sphere-halfspace":                  # where the time of "full" goes
            t_place = best_us(lambda: place(*plist[3]), quick)
            t_read = best_us(read, quick)
            print(f"  {name:22s} full = set poses {t_place:.2f} us + query {t_query:.2f} us"
                  f" + read 1 contact {t_read:.2f} us (+ loop)")
        first = (f"first: depth {found[0][0]:+.5f} m, normal "
                 f"{np.array2string(np.asarray(found[0][1]), precision=3, suppress_small=True)}"
                 if found else "no contact")
        print(f"  {name:22s} query {t_query:9.2f} us   full {t_full:9.2f} us   "
              f"contacts {min(counts)}..{max(counts)} ({first})")
        figures[name] = t_full
        if name == "box-halfspace" and hasattr(lib, "patch"):
            for tol in (None, 0.01):
                run = lib.patch(plist, tol)
                t_patch = best_us(run, quick)
                sizes = sorted({tuple(len(pp[2]) for pp in run()) for _ in plist})
                print(f"  {'box-halfspace patch':22s} full (collide + patch) {t_patch:9.2f} us   "
                      f"patch tolerance {lib.patch_tolerance:g} m: points per patch over the "
                      f"poses {sizes}")
                figures.setdefault("box-halfspace patch", t_patch)
    # broad phase: 100 spheres of radius 0.05 m on a 5 x 5 x 4 grid 0.12 m apart, jiggled
    rng = np.random.default_rng(2)
    grid = np.array([(i, j, k) for i in range(5) for j in range(5) for k in range(4)], float) * 0.12
    step = lib.broadphase(grid, 0.05)
    frames = [grid + rng.uniform(-0.015, 0.015, grid.shape) for _ in range(N_POSES)]
    state = {"k": 0}

    def bp():
        state["k"] = (state["k"] + 1) % N_POSES
        return step(frames[state["k"]])
    n_bp = [step(f) for f in frames]
    t_bp = best_us(bp, quick)
    print(f"  broad phase, 100 spheres (update poses + collide): {t_bp:9.1f} us per step, "
          f"{min(n_bp)}..{max(n_bp)} contacts")
    print(f"  numba @njit calling {lib.name}.collide: {numba_refuses(lib)}")
    return figures


def main():
    print(f"machine: {machine()}; load average {load()}")
    print(f"numpy from {os.path.dirname(np.__file__)}")
    results = {}
    for cls, module in ((FclLib, "fcl"), (CoalLib, "coal")):
        try:
            lib = cls()
        except Exception as exc:                        # ImportError, or a broken binary
            print(f"{cls.name}: SKIPPED, 'import {module}' failed: {type(exc).__name__}: {exc}")
            continue
        print(f"{lib.name} {lib.version} from {os.path.dirname(lib.m.__file__)}")
        results[lib.name] = run_library(lib, ARGS.quick)
    if results:
        print("cost of 100 pairs from a Python loop (full query each), per RK4 step:")
        for name, fig in results.items():
            for case, us in fig.items():
                print(f"  {name:10s} {case:22s} once per step {100 * us / 1e3:8.2f} ms, "
                      f"at all 4 stages {400 * us / 1e3:8.2f} ms")
    print(f"load average after: {load()}")


if __name__ == "__main__":
    main()
