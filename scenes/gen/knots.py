"""Generate the knot-tightening scenes (issue #5; digest-der-imc F5.1) on the thesis rod
(L = 1 m, r = 1.6 mm, E = 0.18 MPa, rho = 1180 kg/m^3): loose knots cut open from closed
curves, scaled so every pair of points far apart along the rod is > 2.5 (2h) apart and no bend
is tighter than 6 h (9 h for the cinquefoil, whose inner bends otherwise spring open faster
than 0.5 r per 1 ms step), with straight tails turned (circular fillets of radius 10 h) onto the x
axis, pulled apart along their lines after 1 s of rest.

  python3 scenes/gen/knots.py overhand   > scenes/knot_overhand.toml    (trefoil, T(2,3))
  python3 scenes/gen/knots.py cinquefoil > scenes/knot_cinquefoil.toml  (T(2,5))
  python3 scenes/gen/knots.py square     > scenes/knot_square.toml      (3_1 # 3_1*)
  python3 scenes/gen/knots.py granny     > scenes/knot_granny.toml      (3_1 # 3_1)
  python3 scenes/gen/knots.py surgeons   > scenes/knot_surgeons.toml    (5_1 # 3_1, opposite senses)

A composite knot is two loose throws in a row along the rod, joined by a straight connector:
opposite handedness makes the square knot, the same handedness the granny."""
import math, sys

h = 1.6e-3          # rod radius [m]
L = 1.0             # rod length [m]
gap = 0.5           # radians of the curve removed around the cut
speed = 0.012       # [m/s] each end is drawn out along its tail after 1 s of rest


def dist(a, b):
    return math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b)))
def unit(v):
    m = math.sqrt(sum(c * c for c in v))
    return tuple(c / m for c in v)
def add(a, b, f=1.0):
    return tuple(x + f * y for x, y in zip(a, b))
def dot(a, b):
    return sum(x * y for x, y in zip(a, b))


def trefoil(t):
    """The closed trefoil of the thesis (T(2,3)); its outermost point (in -y) is t = pi."""
    return (math.sin(t) + 2 * math.sin(2 * t), math.cos(t) - 2 * math.cos(2 * t), -math.sin(3 * t))


def cinquefoil(t):
    """T(2,5) on the torus of radii 2 and 1, turned so its outermost point (in -y) is t = pi."""
    t = t - math.pi
    rr = 2 + math.cos(5 * t)
    return (rr * math.sin(2 * t), -rr * math.cos(2 * t), -math.sin(5 * t))


def open_knot(c, bend=6.0):
    """The closed curve c cut open around t = pi (a gap of `gap` radians), scaled to the
    clearance rules, no bend tighter than `bend` h. Returns the scaled points."""
    n = 600
    ts = [math.pi + gap + (2 * math.pi - 2 * gap) * k / n for k in range(n + 1)]
    pts = [c(t) for t in ts]
    seg = [dist(pts[k], pts[k + 1]) for k in range(n)]
    arc = [0.0]
    for s in seg:
        arc.append(arc[-1] + s)
    dmin = min(dist(pts[i], pts[j]) for i in range(0, n + 1, 3) for j in range(i, n + 1, 3)
               if arc[j] - arc[i] > 3.0)
    def curvature_radius(k):
        a, b, c2 = pts[k - 1], pts[k], pts[k + 1]
        ab, bc, ac = dist(a, b), dist(b, c2), dist(a, c2)
        area2 = abs((b[0]-a[0])*(c2[1]-a[1]) - (b[1]-a[1])*(c2[0]-a[0])) ** 2 \
            + abs((b[1]-a[1])*(c2[2]-a[2]) - (b[2]-a[2])*(c2[1]-a[1])) ** 2 \
            + abs((b[2]-a[2])*(c2[0]-a[0]) - (b[0]-a[0])*(c2[2]-a[2])) ** 2
        return ab * bc * ac / (2 * math.sqrt(area2) + 1e-300)
    rmin = min(curvature_radius(k) for k in range(1, n))
    scale = max(2.5 * (2 * h) / dmin, bend * h / rmin) * 1.05
    sys.stderr.write(f"knot: scale {scale:.5f} m, length {arc[-1] * scale:.4f} m, "
                     f"min non-adjacent distance {dmin*scale/h:.2f} h, "
                     f"min radius of curvature {rmin*scale/h:.2f} h\n")
    return [tuple(v * scale for v in q) for q in pts]


def fillet(pt, a, b):
    """From pt along the unit tangent a, a circular turn of radius 10 h into the direction b."""
    R = 10 * h
    phi = math.acos(max(-1.0, min(1.0, dot(a, b))))
    nrm = unit(add(b, a, -dot(a, b)))
    centre = add(pt, nrm, R)
    steps = 40
    return [add(add(centre, nrm, -R * math.cos(phi * k / steps)), a, R * math.sin(phi * k / steps))
            for k in range(1, steps + 1)]


def module(p):
    """A knot's points with fillets turning both cut ends onto the x axis: the rod comes in
    from +x and leaves towards -x (the outer ends of both fillets head along -x)."""
    t0 = unit(add(p[0], p[1], -1))
    t1 = unit(add(p[-1], p[-2], -1))
    assert p[0][0] > p[-1][0]
    return list(reversed(fillet(p[0], t0, (1.0, 0.0, 0.0)))) + p + fillet(p[-1], t1, (-1.0, 0.0, 0.0))


def length(poly):
    return sum(dist(poly[k], poly[k + 1]) for k in range(len(poly) - 1))


def build(knots, connector):
    """Knot modules in a row (each translated so it starts `connector` beyond the last one's
    end, along -x), with straight tails making the rod L long."""
    poly = []
    for k, p in enumerate(knots):
        m = module(p)
        if poly:
            shift = add(add(poly[-1], (-connector, 0.0, 0.0)), m[0], -1)
            m = [add(q, shift) for q in m]
        poly += m
    tail = (L - length(poly)) / 2
    assert tail > 0.05, tail
    return [add(poly[0], (tail, 0.0, 0.0))] + poly + [add(poly[-1], (-tail, 0.0, 0.0))]


def check_clearance(poly):
    """Every pair of points more than 10 h apart along the rod (resampled at h/2) is > 5 h
    apart in space."""
    pts, arcs = [poly[0]], [0.0]
    for a, b in zip(poly, poly[1:]):
        d = dist(a, b)
        m = max(1, int(math.ceil(d / (h / 2))))
        for k in range(1, m + 1):
            pts.append(add(a, add(b, a, -1), k / m))
            arcs.append(arcs[-1] + d / m)
    best = min(dist(pts[i], pts[j]) for i in range(len(pts)) for j in range(i + 1, len(pts))
               if arcs[j] - arcs[i] > 10 * h)
    assert best > 5 * h, f"two parts of the rod pass within {best / h:.2f} h"
    sys.stderr.write(f"clearance {best / h:.2f} h; rod {arcs[-1]:.6f} m\n")


def mirror(p):
    return [(x, y, -z) for x, y, z in p]


HEAD = {
    "overhand": ("An overhand knot (open trefoil, T(2,3))", 10.0),
    "cinquefoil": ("A loose T(2,5) knot (open cinquefoil: two more crossings than the overhand)", 13.0),
    "square": ("A square knot in its knot-theory form (3_1 # 3_1*): two loose overhand throws of "
               "opposite handedness in a row", 15.0),
    "granny": ("A granny knot in its knot-theory form (3_1 # 3_1): two loose overhand throws of "
               "the same handedness in a row", 15.0),
    "surgeons": ("A surgeon's knot in its knot-theory form (5_1 # 3_1): a loose double throw (the "
                 "double overhand, T(2,5)) and a single throw of the opposite sense in a row", 15.0),
}

kind = sys.argv[1] if len(sys.argv) > 1 else "overhand"
what, duration = HEAD[kind]
if kind == "overhand":
    poly = build([open_knot(trefoil)], 0.0)
elif kind == "cinquefoil":
    poly = build([open_knot(cinquefoil, 9.0)], 0.0)
elif kind == "surgeons":
    # The two curves as drawn twist in opposite senses (the trefoil's diagrams have writhe −3,
    # the cinquefoil's +5): as is, the throws are opposite (the surgeon's knot); mirroring the
    # trefoil (`surgeons same`) gives the granny-like variant.
    flip = mirror if (len(sys.argv) > 2 and sys.argv[2] == "same") else (lambda p: p)
    poly = build([open_knot(cinquefoil, 9.0), flip(open_knot(trefoil))], 0.06)
else:
    p = open_knot(trefoil)
    poly = build([p, mirror(p) if kind == "square" else p], 0.06)
check_clearance(poly)
# The overhand, whose figures the performance goals are stated on, takes chord steps; the other
# knots keep Newton's, which their measured figures were taken with.
CHORD = """
# Chord steps (docs/derivations/der-imc.md §F13): the knot's contact set changes slowly, so one
# factorisation serves about two iterations (docs/performance.md, "Chord steps").
chord = true""" if kind == "overhand" else ""
pull = speed * (duration - 1.0)
print(f"""# {what}, tightened by its ends: the knot-tightening experiment of the implicit contact
# model thesis (Choi 2021, §4; digest-der-imc D10/F5): a 1 m rod of radius 1.6 mm,
# E = 0.18 MPa, ρ = 1180 kg/m³, tied loosely (every non-adjacent pair > 2.5 h apart), held still
# for 1 s, then pulled apart along its (collinear) tails at {speed * 1e3:.0f} mm/s per end. Self-contact is
# the IMC model in the Newton solve. Generated by scenes/gen/knots.py {kind}.
version = 1
duration = {duration}
gravity = [0.0, 0.0, 0.0]
self_contact = true

[solver]
model = "cosserat"
dt = 1.0e-3
elements = 300{CHORD}

[[rods]]
radius = 1.6e-3
youngs_modulus = 1.8e5
poisson_ratio = 0.5
density = 1180.0
normal = [0.0, 0.0, 1.0]
start = "clamped"
end = "clamped"
mass_damping = 2.0""")
print("centerline = [")
for q in poly:
    print(f"  [{q[0]:.6f}, {q[1]:.6f}, {q[2]:.6f}],")
print("]")
for name, d in (("start_motion", 1.0), ("end_motion", -1.0)):
    print(f"""
[rods.{name}]
times = [0.0, 1.0, {duration}]
displacement = [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [{pull*d:.6f}, 0.000000, 0.000000]]""")
