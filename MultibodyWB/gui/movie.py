"""Movies of the 3D view: animated GIF (PIL) and MP4 (ffmpeg).

:func:`record` steps a playback function through a list of times, renders FreeCAD's 3D view
off-screen at each (``View3DInventorPy.saveImage``) and writes the frames as a GIF or an MP4 file,
chosen by the file's extension. :func:`write_gif` and :func:`write_mp4` write given frames (PNG
files or PIL images).

Files appear whole or not at all: each is written to a temporary file in the same directory and
renamed into place; a cancelled or failed recording leaves neither the file nor its frames.

Only :func:`record` touches Qt (to let the 3D view update between frames), and only if it is there:
the writers need no GUI.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

from ..solver.api import Cancelled

#: What :func:`write_mp4` says when there is no ffmpeg.
NEEDS_FFMPEG = "MP4 export needs ffmpeg (apt install ffmpeg); GIF export works without it"

#: File extensions :func:`record` writes.
FORMATS = (".gif", ".mp4")

#: Frames sampled to make a GIF's one palette.
PALETTE_SAMPLES = 8


class MovieError(RuntimeError):
    """A movie could not be written (no frames, unknown format, ffmpeg missing or failing)."""


__all__ = ["MovieError", "Cancelled", "write_gif", "write_mp4", "record", "NEEDS_FFMPEG"]


# --------------------------------------------------------------------------------------------------
# Frames
# --------------------------------------------------------------------------------------------------

def _pil(group, name):
    """A PIL constant from its enum (Pillow >= 9.1: ``Image.Dither.NONE``) or the old name."""
    from PIL import Image
    enum = getattr(Image, group, None)
    return getattr(enum, name) if enum is not None else getattr(Image, name)


def _rgb(frame, size=None):
    """``frame`` (path or PIL image) as an RGB image, resized to ``size`` if given and different."""
    from PIL import Image
    if isinstance(frame, Image.Image):
        image = frame.convert("RGB")
    else:
        with Image.open(os.fspath(frame)) as f:
            image = f.convert("RGB")
    if size is not None and image.size != tuple(size):
        image = image.resize(tuple(size), _pil("Resampling", "BILINEAR"))
    return image


def _frame_size(frame):
    from PIL import Image
    if isinstance(frame, Image.Image):
        return frame.size
    with Image.open(os.fspath(frame)) as f:     # reads the header only
        return f.size


def _temp_beside(path, suffix):
    """A new empty temporary file in ``path``'s directory (for writing, then renaming)."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=suffix,
                               dir=folder)
    os.close(fd)
    return tmp


def _publish(tmp, path):
    """Rename the finished temporary file ``tmp`` to ``path``, with the permissions a new file
    gets (mkstemp makes it private)."""
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(tmp, 0o666 & ~mask)
    os.replace(tmp, path)


def _remove(path):
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


# --------------------------------------------------------------------------------------------------
# GIF
# --------------------------------------------------------------------------------------------------

def _palette(frames, size):
    """One palette image (mode P, 256 colours) from a few frames spread over the movie."""
    from PIL import Image
    n = len(frames)
    picks = sorted({round(i * (n - 1) / max(PALETTE_SAMPLES - 1, 1))
                    for i in range(min(n, PALETTE_SAMPLES))})
    # the sampled frames side by side, at half size (enough to find the colours)
    w, h = max(1, size[0] // 2), max(1, size[1] // 2)
    sheet = Image.new("RGB", (w * len(picks), h))
    for k, i in enumerate(picks):
        sheet.paste(_rgb(frames[i]).resize((w, h), _pil("Resampling", "NEAREST")), (k * w, 0))
    return sheet.quantize(colors=256, method=_pil("Quantize", "MEDIANCUT"),
                          dither=_pil("Dither", "NONE"))


def write_gif(frames, path, fps=25, loop=True):
    """Write ``frames`` as an animated GIF.

    Parameters
    ----------
    frames : sequence of str, Path or PIL.Image.Image
        PNG files or images, all shown at the size of the first (others are resized).
    path : str or Path
        The GIF file (replaced if it exists).
    fps : float
        Frames per second. GIF stores durations in hundredths of a second: 25 fps (40 ms) is
        exact, 30 fps becomes 30 ms per frame.
    loop : bool
        Play forever (True) or once.

    One palette for the whole movie, from a few frames spread over it, without dithering: the
    parts of the picture that do not move stay the same from frame to frame, so PIL stores only
    the changed rectangle of each frame (about 100 frames of 640 x 480 of a CAD view: a few
    hundred kB). Consecutive identical frames are merged into one with the summed duration.

    Returns
    -------
    str
        ``path``.
    """
    frames = list(frames)
    if not frames:
        raise MovieError("no frames to write")
    if fps <= 0:
        raise MovieError(f"fps must be positive, not {fps}")
    path = os.fspath(path)
    size = _frame_size(frames[0])
    no_dither = _pil("Dither", "NONE")
    palette = _palette(frames, size)

    def indexed(frame):
        return _rgb(frame, size).quantize(palette=palette, dither=no_dither)

    first = indexed(frames[0])
    rest = (indexed(f) for f in frames[1:])
    options = dict(format="GIF", save_all=True, append_images=rest, optimize=True,
                   duration=max(10, int(round(1000.0 / fps))), disposal=1)
    if loop:
        options["loop"] = 0
    tmp = _temp_beside(path, ".gif")
    try:
        first.save(tmp, **options)
        _publish(tmp, path)
    finally:
        _remove(tmp)
    return path


# --------------------------------------------------------------------------------------------------
# MP4
# --------------------------------------------------------------------------------------------------

def write_mp4(frames, path, fps=25):
    """Write ``frames`` as an H.264 MP4 video with ffmpeg (libx264, yuv420p).

    Parameters
    ----------
    frames : sequence of str, Path or PIL.Image.Image
        PNG files or images, shown at the size of the first (others are resized); an odd width
        or height is padded by one pixel (yuv420p needs even sizes).
    path : str or Path
        The MP4 file (replaced if it exists).
    fps : float

    Raises
    ------
    MovieError
        ffmpeg is not installed (:data:`NEEDS_FFMPEG`), or it failed (with its messages).
    """
    from PIL import Image
    ffmpeg = shutil.which("ffmpeg")
    if ffmpeg is None:
        raise MovieError(NEEDS_FFMPEG)
    frames = list(frames)
    if not frames:
        raise MovieError("no frames to write")
    if fps <= 0:
        raise MovieError(f"fps must be positive, not {fps}")
    path = os.fspath(path)
    folder = tempfile.mkdtemp(prefix="mbwb-mp4-")
    tmp = None
    try:
        size = _frame_size(frames[0])
        for i, frame in enumerate(frames):
            target = os.path.join(folder, f"frame_{i:06d}.png")
            if (not isinstance(frame, Image.Image) and os.fspath(frame).lower().endswith(".png")
                    and _frame_size(frame) == size):
                shutil.copyfile(os.fspath(frame), target)
            else:
                _rgb(frame, size).save(target, compress_level=1)
        tmp = _temp_beside(path, ".mp4")
        command = [ffmpeg, "-y", "-loglevel", "error", "-framerate", f"{fps:g}",
                   "-i", os.path.join(folder, "frame_%06d.png"),
                   "-c:v", "libx264", "-pix_fmt", "yuv420p",
                   "-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2", "-movflags", "+faststart", tmp]
        done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              errors="replace")
        if done.returncode != 0:
            tail = "\n".join(done.stderr.strip().splitlines()[-8:])
            raise MovieError(f"ffmpeg failed (status {done.returncode}) writing {path}:\n{tail}")
        _publish(tmp, path)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        if tmp is not None:
            _remove(tmp)
    return path


# --------------------------------------------------------------------------------------------------
# Recording the 3D view
# --------------------------------------------------------------------------------------------------

def _process_events():
    """Qt's processEvents when a Qt application runs (the 3D view updates), else nothing."""
    try:
        from .qt import QtWidgets
    except ImportError:                    # no FreeCAD PySide: a test with a stand-in view
        return lambda: None
    if QtWidgets.QApplication.instance() is None:
        return lambda: None
    return QtWidgets.QApplication.processEvents


def record(view, set_time, times, path, width=640, height=480, fps=25, progress=None,
           cancel=None):
    """Play ``times`` through ``set_time`` and film ``view``; write a GIF or an MP4 file.

    Parameters
    ----------
    view : FreeCAD 3D view
        Anything with ``saveImage(path, width, height, background)`` (FreeCAD 0.20 and 1.0:
        ``Gui.ActiveDocument.ActiveView``; renders off-screen at that size, "Current"
        background).
    set_time : callable(float)
        Puts the model at time t (the player's function).
    times : sequence of float
        The frame times (s), in the order shown.
    path : str or Path
        Output file; ``.gif`` (PIL) or ``.mp4`` (ffmpeg) by its extension.
    width, height : int
        Frame size in pixels.
    fps : float
    progress : callable(float), optional
        Called with the fraction done after each frame (0 < f < 1) and with 1.0 at the end.
    cancel : callable() -> bool, optional
        Looked at before each frame: True stops; no file is written.

    Returns
    -------
    str
        ``path``.

    Raises
    ------
    MovieError
        The extension is neither .gif nor .mp4, there are no times, or MP4 without ffmpeg
        (checked before the first frame).
    Cancelled
        ``cancel()`` returned True (the solver's :class:`~..solver.api.Cancelled`).
    """
    path = os.fspath(path)
    ext = os.path.splitext(path)[1].lower()
    if ext not in FORMATS:
        raise MovieError(f"cannot write '{path}': the movie formats are "
                         f"{', '.join(FORMATS)} (by the file's extension)")
    times = [float(t) for t in times]
    if not times:
        raise MovieError("no frame times")
    if ext == ".mp4" and shutil.which("ffmpeg") is None:
        raise MovieError(NEEDS_FFMPEG)
    if not os.path.isdir(os.path.dirname(os.path.abspath(path))):
        raise MovieError(f"cannot write '{path}': the folder does not exist")
    events = _process_events()
    folder = tempfile.mkdtemp(prefix="mbwb-movie-")
    try:
        frames = []
        n = len(times)
        for i, t in enumerate(times):
            if cancel is not None and cancel():
                raise Cancelled(f"movie cancelled after {i} of {n} frames; nothing written")
            set_time(t)
            events()
            frame = os.path.join(folder, f"frame_{i:06d}.png")
            view.saveImage(frame, int(width), int(height), "Current")
            if not os.path.isfile(frame):
                raise MovieError(f"the 3D view wrote no image for t = {t:g} s")
            frames.append(frame)
            if progress is not None:
                progress((i + 1) / (n + 1))
        if ext == ".gif":
            write_gif(frames, path, fps=fps)
        else:
            write_mp4(frames, path, fps=fps)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if progress is not None:
        progress(1.0)
    return path
