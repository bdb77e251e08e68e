"""Moving the 3D view without touching the document: the player's fast path.

Setting a solid's ``Placement`` makes FreeCAD signal a changed object (tree, property editor,
observers, the view provider): for a model of 50 bodies and 100 markers that costs about 50 ms
a frame. While playing, :class:`ViewMotion` instead writes the poses straight into each object's
view transform (the ``SoTransform`` FreeCAD keeps as the first child of the view provider's
root, the node ``Placement`` drives), which the 3D view renders at once; the document keeps its
placements. When playback pauses, the player puts the document's placements at the shown time
(:meth:`MultibodyWB.document.animation.Animator.apply`) so that measurements and selections agree
with the view; :meth:`ViewMotion.sync` then makes the view follow the document again.
"""

from pivy import coin


def view_transform(obj):
    """The ``SoTransform`` that places ``obj``'s view, or None."""
    vobj = getattr(obj, "ViewObject", None)
    root = getattr(vobj, "RootNode", None)
    if root is None or root.getNumChildren() == 0:
        return None
    node = root.getChild(0)
    return node if isinstance(node, coin.SoTransform) else None


class ViewMotion:
    """Poses of an :class:`~MultibodyWB.document.animation.Animator`'s objects, shown in the 3D
    view."""

    def __init__(self, animator):
        self.animator = animator
        self.nodes = [view_transform(obj) for obj in animator.objects]
        #: False when some object has no view transform (then the player sets placements).
        self.available = all(node is not None for node in self.nodes)
        # the fields, looked up once: pivy's attribute lookup costs more than setting them
        self.fields = [(node.translation, node.rotation) if node is not None else None
                       for node in self.nodes]

    def show(self, t):
        """Put every object's view where the run has it at time ``t``."""
        q, p = self.animator.object_poses(t)
        for (translation, rotation), (x, y, z), (qx, qy, qz, qw) in zip(
                self.fields, p.tolist(), q.tolist()):
            translation.setValue(x, y, z)
            rotation.setValue(qx, qy, qz, qw)

    def sync(self):
        """Make every view follow its object's document placement again."""
        for obj, fields in zip(self.animator.objects, self.fields):
            if fields is None:
                continue
            pl = obj.Placement
            fields[0].setValue(*tuple(pl.Base))
            fields[1].setValue(*pl.Rotation.Q)
