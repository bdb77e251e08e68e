"""GUI check run inside FreeCAD: the drawing is the start, on a four-bar a designer builds.

A crank-rocker four-bar of Part boxes cut by 8 mm bores, links 10 mm thick stacked along the pins
(ground plate z 0..10, crank and rocker z 10..20, coupler z 20..30), the crank drawn at 90 deg.
Built through the workbench's commands with the selection set as a click sets it: Body and
Ground on the solids, each revolute hinge on the two bores' cylindrical faces (so the markers sit
mid-bore, 10 mm apart along the pin). The crank pivot gets a 60 rpm motor; the crank pin a
spring (relaxed as drawn). Simulate through the panel's Run button. The findings: the first frame
of the stored run against the drawn placements of every body, each body's travel along the pins
over the run, the spring's energy at t = 0; then an absolute driver from a hidden zero: the panel
refuses to run, says what moves in mm and degrees, shows it, and Keep the drawing puts the parts
back; Run from this start runs.

Started by tests/test_gui_four_bar.py; writes its findings as JSON.
"""

import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import FreeCAD  # noqa: E402
import FreeCADGui  # noqa: E402
import in_freecad  # noqa: E402
import numpy as np  # noqa: E402

WORKBENCH = "MultibodyWorkbench"
BORE = 4.0            # mm radius
WIDTH = 16.0
THICK = 10.0
O = np.array([30.0, 40.0])
GROUND, CRANK, COUPLER, ROCKER = 120.0, 40.0, 120.0, 80.0


def wait_for(predicate, timeout=300.0):
    t0 = time.perf_counter()
    while not predicate():
        if time.perf_counter() - t0 > timeout:
            raise TimeoutError("waited too long")
        in_freecad.process_events()
        time.sleep(0.01)
    in_freecad.process_events()


def pins():
    """O, A, B, D in the plane (mm): crank at 90 deg, B the upper intersection."""
    D = O + [GROUND, 0.0]
    A = O + [0.0, CRANK]
    AD = D - A
    d = np.linalg.norm(AD)
    a = (COUPLER ** 2 - ROCKER ** 2 + d ** 2) / (2 * d)
    h = math.sqrt(COUPLER ** 2 - a ** 2)
    u = AD / d
    n = np.array([-u[1], u[0]])
    if n[1] < 0:
        n = -n
    return O, A, A + a * u + h * n, D


def link(doc, name, p, q, z0):
    """A bar from pin p to pin q (mm, plane), THICK high from z0, a bore at each end."""
    import Part
    L = float(np.linalg.norm(q - p))
    bar = Part.makeBox(L + WIDTH, WIDTH, THICK, FreeCAD.Vector(-WIDTH / 2, -WIDTH / 2, 0))
    for x in (0.0, L):
        bar = bar.cut(Part.makeCylinder(BORE, THICK, FreeCAD.Vector(x, 0, 0)))
    angle = math.degrees(math.atan2(q[1] - p[1], q[0] - p[0]))
    obj = doc.addObject("Part::Feature", name)
    obj.Shape = bar
    obj.Placement = FreeCAD.Placement(FreeCAD.Vector(p[0], p[1], z0),
                                      FreeCAD.Rotation(FreeCAD.Vector(0, 0, 1), angle))
    return obj


def plate(doc, O, D):
    import Part
    box = Part.makeBox(GROUND + 60, 50, THICK, FreeCAD.Vector(O[0] - 30, O[1] - 25, 0))
    for p in (O, D):
        box = box.cut(Part.makeCylinder(BORE, THICK, FreeCAD.Vector(p[0], p[1], 0)))
    obj = doc.addObject("Part::Feature", "Plate")
    obj.Shape = box
    return obj


def bore_face(obj, pin):
    """The name of the cylindrical face of the bore at ``pin`` (mm, plane)."""
    for i, f in enumerate(obj.Shape.Faces, 1):
        s = f.Surface
        if type(s).__name__ == "Cylinder" and abs(s.Radius - BORE) < 1e-6:
            c = f.CenterOfMass
            if math.hypot(c.x - pin[0], c.y - pin[1]) < 1e-6:
                return f"Face{i}"
    raise LookupError(f"no bore of {obj.Name} at {pin}")


def select(doc, *items):
    FreeCADGui.Selection.clearSelection()
    for obj, sub in items:
        if sub:
            FreeCADGui.Selection.addSelection(doc.Name, obj.Name, sub)
        else:
            FreeCADGui.Selection.addSelection(obj)
    in_freecad.process_events()


W = in_freecad._widgets_module()


def dialog_button(which):
    """The task dialog's standard button ``which`` ("Ok", "Cancel") the user would click."""
    for box in FreeCADGui.getMainWindow().findChildren(W.QDialogButtonBox):
        button = box.button(getattr(W.QDialogButtonBox, which))
        if button is not None and button.isVisible():
            return button
    return None


def click_ok():
    button = dialog_button("Ok")
    if button is None:
        return False
    button.click()
    in_freecad.process_events()
    return True


def type_into(name, text):
    """Type ``text`` into the open task panel's field ``name`` as a user does."""
    from MultibodyWB.gui import task_base
    for form in task_base.current.form:
        w = form.findChild(W.QWidget, name)
        if w is not None:
            edit = w if isinstance(w, W.QLineEdit) else w.findChild(W.QLineEdit)
            edit.selectAll()
            edit.setText(text)
            edit.textEdited.emit(text)
            in_freecad.process_events()
            return True
    return False


def report_errors():
    return [line for line in in_freecad.report_view_text().splitlines()
            if "MultibodyWB" in line and line.startswith("Err")]


def multibody(doc, type_name):
    return [o for o in doc.Objects
            if getattr(getattr(o, "Proxy", None), "Type", "") == type_name]


def drawn(mechanism):
    """Base frame of every body as drawn: Label -> (R, p in m)."""
    from MultibodyWB.objects.body import rotation_matrix, solid_placement
    out = {}
    for b in multibody(mechanism.Document, "Multibody::Body"):
        pl = solid_placement(b.Solids[0])
        out[b.Label] = (rotation_matrix(pl.Rotation), np.array(pl.Base) / 1000.0)
    return out


def solid_of(mechanism):
    """Body Label -> the name of its first solid."""
    return {b.Label: b.Solids[0].Name for b in multibody(mechanism.Document, "Multibody::Body")}


def frame_errors(results, mechanism, row=0):
    """Per body (by its solid's name): (mm, rad) differences between the run's row and the
    drawing."""
    out = {}
    names = solid_of(mechanism)
    for label, (R, p) in drawn(mechanism).items():
        if label not in results.bodies:
            continue
        dp = np.linalg.norm(results.position(label)[row] - p) * 1000.0
        dR = float(np.max(np.abs(results.rotation(label)[row] - R)))
        out[names[label]] = [float(dp), dR]
    return out


def run_panel(panel):
    """Press Run (its signal); wait for the job if one started; return whether it started."""
    panel.run_button.click()
    # read before the events are processed: a short run can start and end within them
    started = panel.running
    in_freecad.process_events()
    started = started or panel.running
    if started:
        wait_for(lambda: not panel.running and not panel.timer.isActive())
    return started


def placements_of(objs):
    """Name -> (base, rotation quaternion) of each object, as placed now."""
    return {o.Name: (tuple(o.Placement.Base), tuple(o.Placement.Rotation.Q)) for o in objs}


def open_simulate(doc, mechanism):
    """Select the mechanism, run the Simulate command; the panel it opens."""
    from MultibodyWB.gui import simulate_panel
    select(doc, (mechanism, ""))
    FreeCADGui.runCommand("MultibodyWB_Simulate")
    in_freecad.process_events()
    return simulate_panel.current


def close_task_panel():
    """Close the open task panel with its Close button (the dialog's standard Close), as a
    user does; True when no task dialog is open after it."""
    button = dialog_button("Close")
    if button is None:
        return False
    button.click()
    in_freecad.process_events()
    return not FreeCADGui.Control.activeDialog()


def typed_into_hinge(hinge, field, text):
    """Open ``hinge``'s task panel by a double-click, type ``text`` into ``field``, press OK."""
    hinge.ViewObject.doubleClicked()
    in_freecad.process_events()
    typed = type_into(field, text)
    return typed and click_ok()


def cut_hinge_rate(doc, mechanism, hinges, crank, coupler, rocker, rest):
    """The crank turned by its 60 rpm motor; the user types 100 deg/s into the initial rate of
    the hinge that closes the loop (its task panel, opened by a double-click; the Simulate
    panel closed first: one task panel at a time), then Simulate -> Run. The panel refuses and
    says the rate the loop gives, naming the property to change; typed back as shown, the run
    starts with that rate on the hinge."""
    import re
    from MultibodyWB.document import runs
    from MultibodyWB.objects import export
    from MultibodyWB.objects.result import load
    from MultibodyWB.solver.analysis.topology import analyse
    r = {}
    r["cut_hinges"] = list(analyse(export.to_model(mechanism)).cut_hinges)
    cut = hinges["RockerPivot"]
    r["cut_is_rocker_pivot"] = r["cut_hinges"] == [cut.Label]
    r["cut_simulate_closed"] = close_task_panel()
    r["cut_rate_typed"] = typed_into_hinge(cut, "InitialRateRz", "100 deg/s")
    r["cut_rate_property"] = float(cut.InitialRateRz.getValueAs("deg/s"))
    n_runs = len(runs.result_objects(mechanism))
    panel = open_simulate(doc, mechanism)
    r["cut_refused_started"] = run_panel(panel)
    r["cut_refused_status"] = panel.status.text()
    text = panel.messages.toPlainText()
    r["cut_refused_messages"] = text[-3000:]
    r["cut_refused_runs"] = len(runs.result_objects(mechanism)) - n_runs
    in_freecad.grab_main_window("four_bar_cut_rate_refused.png")
    found = re.search(r"the loop gives [-0-9.e+]+ rad/s \(([-0-9.e+]+) deg/s\)", text)
    r["cut_loop_rate_shown"] = found.group(1) if found else None
    if found:
        close_task_panel()
        r["cut_rate_typed_back"] = typed_into_hinge(cut, "InitialRateRz",
                                                    f"{found.group(1)} deg/s")
        panel = open_simulate(doc, mechanism)
        r["cut_typed_back_started"] = run_panel(panel)
        r["cut_typed_back_status"] = panel.status.text()
        r["cut_typed_back_messages"] = panel.messages.toPlainText()[-3000:]
        r["cut_typed_back_runs"] = len(runs.result_objects(mechanism)) - n_runs
        res = load(runs.latest_result(mechanism))
        r["cut_first_rate_deg_s"] = math.degrees(res.column(f"{cut.Label}.rz_rate")[0])
        r["cut_first_crank_rate_deg_s"] = math.degrees(
            res.column(f"{hinges['CrankPivot'].Label}.rz_rate")[0])
        r["cut_first_frame_errors"] = frame_errors(res, mechanism, 0)
    # no motor: the crank's initial rate typed instead (360 deg/s), the cut hinge's 100 deg/s
    # against it: not refused (no driver), the start box says which rates the loop takes
    crank_hinge = hinges["CrankPivot"]
    close_task_panel()
    crank_hinge.MotorSpeedRz = "0 deg/s"
    r["cut_crank_rate_typed"] = typed_into_hinge(crank_hinge, "InitialRateRz", "360 deg/s")
    r["cut_rate_retyped"] = typed_into_hinge(cut, "InitialRateRz", "100 deg/s")
    panel = open_simulate(doc, mechanism)
    n_before = len(runs.result_objects(mechanism))
    r["cut_rates_started"] = run_panel(panel)
    r["cut_rates_box_visible"] = panel.start_box.isVisible()
    r["cut_rates_box_text"] = panel.start_text.text()
    r["cut_rates_status"] = panel.status.text()
    r["cut_rates_buttons"] = [panel.accept_start_button.text(), panel.keep_drawing_button.text()]
    # the panel fits the combo view: nothing of it cut off on the right
    form = panel.form if not isinstance(panel.form, list) else panel.form[0]
    scroll = form.parentWidget()
    while scroll is not None and not isinstance(scroll, W.QScrollArea):
        scroll = scroll.parentWidget()
    view = scroll.viewport() if scroll is not None else None
    right = {b.objectName(): b.mapTo(view, b.rect().topLeft()).x() + b.width()
             for b in (panel.cancel_button, panel.keep_drawing_button)} if view else {}
    r["cut_rates_panel_fits"] = bool(right) and max(right.values()) <= view.width()
    r["cut_rates_panel_widths"] = [right, view.width() if view else None]
    in_freecad.grab_main_window("four_bar_cut_rates_box.png")
    panel.accept_start_button.click()
    in_freecad.process_events()
    wait_for(lambda: not panel.running and not panel.timer.isActive())
    r["cut_rates_accepted_runs"] = len(runs.result_objects(mechanism)) - n_before
    res = load(runs.latest_result(mechanism))
    r["cut_rates_accepted_rates_deg_s"] = {
        name: math.degrees(res.column(f"{h.Label}.rz_rate")[0]) for name, h in hinges.items()}
    after = placements_of((crank, coupler, rocker))
    r["cut_drawing_kept"] = after == rest
    # the rates cleared again (the zeros the drawing had), the motor back, for what follows
    close_task_panel()
    typed_into_hinge(cut, "InitialRateRz", "0 deg/s")
    typed_into_hinge(crank_hinge, "InitialRateRz", "0 deg/s")
    crank_hinge.MotorSpeedRz = "360 deg/s"
    doc.recompute()
    open_simulate(doc, mechanism)
    return r


def cut_hinge_coordinate(doc, mechanism, hinges, crank, coupler, rocker, rest):
    """The hinge that closes the loop started 3 deg away from the drawing: its task panel,
    InitialAsDrawn unticked (a click), InitialRz typed as drawn + 3 deg, OK; Simulate -> Run
    with the crank's motor, which holds the crank as drawn: refused (out of the loop's reach);
    without the motor: the start box (the parts that would move, in mm and degrees, and why:
    the cut hinge's prescribed coordinate against the drawing); Keep the drawing puts them
    back and nothing is stored. Then InitialAsDrawn ticked again, the motor back."""
    from MultibodyWB.document import runs
    from MultibodyWB.gui import task_base
    from MultibodyWB.objects import export
    from MultibodyWB.solver.analysis.kinematics import hinge_coordinates
    r = {}
    cut = hinges["RockerPivot"]
    model = export.to_model(mechanism)
    drawn_deg = math.degrees(float(hinge_coordinates(model, model.hinge(cut.Label))[0]))
    r["coord_drawn_deg"] = drawn_deg
    close_task_panel()
    cut.ViewObject.doubleClicked()
    in_freecad.process_events()
    box = None
    for form in task_base.current.form:
        box = box or form.findChild(W.QCheckBox, "InitialAsDrawn")
    r["coord_box_found"] = box is not None
    if box is not None and box.isChecked():
        box.click()
        in_freecad.process_events()
    r["coord_typed"] = type_into("InitialRz", f"{drawn_deg + 3.0:.6f} deg")
    r["coord_ok"] = click_ok()
    r["coord_as_drawn_after"] = bool(cut.InitialAsDrawn)
    panel = open_simulate(doc, mechanism)
    n_before = len(runs.result_objects(mechanism))
    # the motor holds the crank where it is drawn: the loop cannot reach 3 deg more
    r["coord_motor_started"] = run_panel(panel)
    r["coord_motor_messages"] = panel.messages.toPlainText()[-3000:]
    # without the motor the crank is free: the start box
    crank_hinge = hinges["CrankPivot"]
    crank_hinge.MotorSpeedRz = "0 deg/s"
    doc.recompute()
    r["coord_started"] = run_panel(panel)
    r["coord_box_visible"] = panel.start_box.isVisible()
    r["coord_box_text"] = panel.start_text.text()
    r["coord_messages"] = panel.messages.toPlainText()[-3000:]
    r["coord_property_deg"] = float(cut.InitialRz.getValueAs("deg"))
    r["coord_buttons"] = [panel.accept_start_button.text(), panel.keep_drawing_button.text()]
    shown = placements_of((crank, coupler, rocker))
    r["coord_shown_moved"] = shown != rest
    in_freecad.grab_main_window("four_bar_cut_coordinate_box.png")
    panel.keep_drawing_button.click()
    in_freecad.process_events()
    back = placements_of((crank, coupler, rocker))
    r["coord_kept_drawing"] = back == rest
    r["coord_runs"] = len(runs.result_objects(mechanism)) - n_before
    # as drawn again, the motor back, for what follows
    close_task_panel()
    cut.InitialAsDrawn = True
    crank_hinge.MotorSpeedRz = "360 deg/s"
    doc.recompute()
    open_simulate(doc, mechanism)
    return r


def check():
    from MultibodyWB.document import runs
    from MultibodyWB.gui import simulate_panel
    from MultibodyWB.objects.result import load
    result = {"freecad_version": FreeCAD.Version()[:3]}
    doc = FreeCAD.newDocument("FourBar")
    O_, A, B, D = pins()
    base = plate(doc, O_, D)
    crank = link(doc, "Crank", O_, A, THICK)
    rocker = link(doc, "Rocker", D, B, THICK)
    coupler = link(doc, "Coupler", A, B, 2 * THICK)
    doc.recompute()
    FreeCADGui.activateWorkbench(WORKBENCH)
    FreeCADGui.ActiveDocument.ActiveView.viewIsometric()
    FreeCADGui.SendMsgToActiveView("ViewFit")
    in_freecad.process_events()
    errors = {}

    # -- bodies and ground, through the commands -------------------------------------------------
    for solid, command in ((crank, "MultibodyWB_Body"), (base, "MultibodyWB_Ground"),
                           (coupler, "MultibodyWB_Body"), (rocker, "MultibodyWB_Body")):
        select(doc, (solid, ""))
        FreeCADGui.runCommand(command)
        in_freecad.process_events()
        errors[f"{command} {solid.Name}"] = report_errors()
    mechanism = multibody(doc, "Multibody::Mechanism")[0]

    # -- hinges on the bores' faces: first the moving body, then the one it hangs on -----------
    hinge_picks = (("CrankPivot", crank, O_, base, O_), ("CrankPin", coupler, A, crank, A),
                   ("RockerPin", coupler, B, rocker, B), ("RockerPivot", rocker, D, base, D))
    hinges = {}
    for name, moving, p, fixed, q in hinge_picks:
        select(doc, (moving, bore_face(moving, p)), (fixed, bore_face(fixed, q)))
        before = {o.Name for o in multibody(doc, "Multibody::Hinge")}
        FreeCADGui.runCommand("MultibodyWB_HingeRevolute")
        in_freecad.process_events()
        made = [o for o in multibody(doc, "Multibody::Hinge") if o.Name not in before]
        hinges[name] = made[0] if made else None
        if name == "CrankPivot":      # the new hinge's panel is open: a 60 rpm motor on it
            result["motor_typed"] = type_into("MotorSpeedRz", "60 rpm")
        result.setdefault("hinge_panel_ok", {})[name] = click_ok()
        errors[f"hinge {name}"] = report_errors()
    result["hinges_made"] = {k: v is not None for k, v in hinges.items()}
    result["report_errors_while_building"] = errors
    result["marker_axial_gaps_mm"] = {}
    for name, h in hinges.items():
        if h is not None:
            a, b = h.InputMarker.Placement.Base, h.OutputMarker.Placement.Base
            result["marker_axial_gaps_mm"][name] = abs(a.z - b.z)
    result["mechanism_status"] = getattr(mechanism, "Status", None)

    result["motor_speed_deg_s"] = float(hinges["CrankPivot"].MotorSpeedRz.getValueAs("deg/s"))
    # -- a spring relaxed as drawn on the crank pin (a tree hinge: RockerPivot closes the loop),
    #    typed into its panel opened by a double-click ------------------------------------------
    hinges["CrankPin"].ViewObject.doubleClicked()
    in_freecad.process_events()
    result["spring_typed"] = type_into("StiffnessRz", "2 N*m/rad")
    result["spring_panel_ok"] = click_ok()
    doc.recompute()
    rest = placements_of((crank, coupler, rocker))

    # -- Simulate: Run through the panel's button -----------------------------------------------
    panel = open_simulate(doc, mechanism)
    panel.set_settings(EndTime=0.5, Step=1e-4, OutputStep=1e-2)
    result["motor_run_started"] = run_panel(panel)
    result["motor_run_status"] = panel.status.text()
    result["motor_run_messages"] = panel.messages.toPlainText()[:4000]
    stored = runs.latest_result(mechanism)
    res = load(stored)
    result["first_frame_errors"] = frame_errors(res, mechanism, 0)
    result["axial_travel_mm"] = {
        solid_of(mechanism)[label]: float(np.ptp(res.position(label)[:, 2]) * 1000.0)
        for label in res.bodies}
    result["body_labels"] = {v: k for k, v in solid_of(mechanism).items()}
    result["crank_angle_deg"] = [float(math.degrees(v)) for v in res.column(f"{hinges['CrankPivot'].Label}.rz")[:3]]
    result["time"] = [float(t) for t in res.time[:3]]
    result["elastic_energy_J"] = [float(v) for v in res.column("energy.elastic")[:3]]
    in_freecad.grab_main_window("four_bar_after_run.png")

    # -- an absolute driver from a hidden zero: refused, shown, kept ------------------------------
    crank_hinge = hinges["CrankPivot"]
    crank_hinge.MotorSpeedRz = "0 deg/s"
    crank_hinge.DriverFromDrawing = False
    crank_hinge.DriverRz = "2*pi*t"
    doc.recompute()
    n_runs = len(runs.result_objects(mechanism))
    result["hidden_zero_run_started"] = run_panel(panel)
    result["hidden_zero_box_visible"] = panel.start_box.isVisible()
    result["hidden_zero_text"] = panel.start_text.text()
    moved = placements_of((crank, coupler, rocker))
    result["hidden_zero_shown_moved"] = moved != rest
    result["hidden_zero_selected"] = sorted(o.Name for o in FreeCADGui.Selection.getSelection())
    in_freecad.grab_main_window("four_bar_start_correction.png")
    panel.keep_drawing_button.click()
    in_freecad.process_events()
    back = placements_of((crank, coupler, rocker))
    result["kept_drawing_restored"] = back == rest
    result["runs_after_keep"] = len(runs.result_objects(mechanism)) - n_runs
    # asked again, and accepted this time
    run_panel(panel)
    panel.accept_start_button.click()
    in_freecad.process_events()
    wait_for(lambda: not panel.running and not panel.timer.isActive())
    result["runs_after_accept"] = len(runs.result_objects(mechanism)) - n_runs
    res2 = load(runs.latest_result(mechanism))
    result["accepted_first_crank_angle_deg"] = float(math.degrees(res2.column(f"{hinges['CrankPivot'].Label}.rz")[0]))
    result["accepted_console"] = in_freecad.python_console_text()[-2000:]
    after = placements_of((crank, coupler, rocker))
    result["drawing_after_accepted_run"] = after == rest

    # -- a rate typed into the hinge that closes the loop, against the motor: refused, the
    #    loop's rate shown; typed back as shown, the run keeps it -----------------------------
    crank_hinge.DriverRz = ""
    crank_hinge.DriverFromDrawing = True
    crank_hinge.MotorSpeedRz = "360 deg/s"
    doc.recompute()
    result.update(cut_hinge_rate(doc, mechanism, hinges, crank, coupler, rocker, rest))
    result.update(cut_hinge_coordinate(doc, mechanism, hinges, crank, coupler, rocker, rest))
    panel = simulate_panel.current

    # -- a first run on a machine whose kernels are not compiled: the compile runs in another
    #    process, the panel shows it, Cancel ends it at once ------------------------------------
    import tempfile
    from MultibodyWB.gui import warmup
    os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="cold-numba-")
    try:
        panel.keep_drawing_button.click()         # (none shown now: harmless)
        crank_hinge.DriverRz = ""
        crank_hinge.MotorSpeedRz = "360 deg/s"
        doc.recompute()
        panel.run_button.click()
        in_freecad.process_events()
        result["cold_compiling"] = warmup.running()
        wait_for(lambda: warmup.elapsed() > 2.0, timeout=30)
        in_freecad.process_events()
        time.sleep(0.1)
        in_freecad.process_events()
        result["cold_status"] = panel.status.text()
        # the compile goes where this FreeCAD's runs will look for it: numba files a source's
        # compiled code under a folder named after the source's path as imported (here through
        # the Mod folder's symlink), and makes that folder when the process imports the kernels
        import MultibodyWB
        from numba.core.caching import _CacheLocator
        cache = os.environ["NUMBA_CACHE_DIR"]
        # the solver's compiled code is in several folders (one per package with cached
        # kernels): FreeCAD's runs look under each one's path as FreeCAD imports it
        solver = os.path.join(os.path.dirname(MultibodyWB.__file__), "solver")
        compiled = set()
        for folder, _, files in os.walk(solver):
            for f in files:
                if f.endswith(".py"):
                    with open(os.path.join(folder, f), encoding="utf-8") as fh:
                        if "@njit(**_" in fh.read():
                            compiled.add(os.path.join(folder, f))
        expected = sorted({_CacheLocator.get_suitable_cache_subpath(p) for p in compiled})
        numba_folders = lambda: [f for f in os.listdir(cache)               # noqa: E731
                                 if not f.startswith("multibodywb-warm-")]   # (its lock, stamp)
        wait_for(lambda: numba_folders() or not warmup.running(), timeout=180)
        result["cold_cache_folders"] = sorted(os.listdir(cache))
        result["cold_cache_folders_of_freecad"] = expected
        result["cold_package_linked"] = os.path.islink(os.path.dirname(os.path.dirname(
            os.path.abspath(MultibodyWB.__file__))))
        t0 = time.perf_counter()
        panel.cancel_button.click()
        in_freecad.process_events()
        result["cold_cancel_seconds"] = time.perf_counter() - t0
        result["cold_running_after_cancel"] = warmup.running() or panel.running
        result["cold_status_after_cancel"] = panel.status.text()
        log = os.path.join(FreeCAD.getUserAppDataDir(), "multibodywb-warmup.log")
        result["cold_log"] = open(log).read()[-2000:] if os.path.isfile(log) else None
        result["cold_python"] = warmup.python_executable()

        # -- the compile's first stage done (the fixed-step kernels: its stamp, written here as
        #    the warm-up writes it when it gets there): an rk4 run starts at once, while the
        #    rest of the compile goes on in the background ----------------------------------
        from MultibodyWB.solver.run import warmup as solver_warmup
        os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="staged-numba-")
        n_before = len(runs.result_objects(mechanism))
        panel.messages.clear()
        job_before = panel.job
        panel.run_button.click()
        in_freecad.process_events()
        wait_for(lambda: warmup.elapsed() > 1.0, timeout=30)
        in_freecad.process_events()
        result["staged_waiting"] = panel.compiling is not None and panel.job is job_before
        result["staged_status_waiting"] = panel.status.text()
        stamp = os.path.join(os.environ["NUMBA_CACHE_DIR"],
                             solver_warmup._stamp_name(solver_warmup.FIXED_STEP_STAGE))
        with open(stamp, "w") as fh:
            fh.write("fixed-step kernels compiled (the test)\n")
        wait_for(lambda: (in_freecad.process_events() or True) and panel.compiling is None
                 and not panel.running and not panel.timer.isActive(), timeout=120)
        result["staged_compile_still_running"] = warmup.running()
        result["staged_runs"] = len(runs.result_objects(mechanism)) - n_before
        result["staged_messages"] = panel.messages.toPlainText()[-3000:]
        warmup.stop()
    finally:
        del os.environ["NUMBA_CACHE_DIR"]
    return result


in_freecad.run_and_quit(check, watchdog_s=600)
