"""Movie export without a GUI: GIF frames, sizes and durations; MP4 through ffmpeg; recording a
stand-in 3D view (progress, cancel, no partial files, temporary frames removed)."""

import os
import shutil
import tempfile

import pytest

PIL = pytest.importorskip("PIL")
from PIL import Image, ImageChops, ImageDraw  # noqa: E402

from MultibodyWB.gui import movie  # noqa: E402

HAVE_FFMPEG = shutil.which("ffmpeg") is not None


def frame(k, size=(64, 48)):
    """A frame with a gradient background and a red square moved ``k`` steps to the right."""
    w, h = size
    image = Image.new("RGB", size)
    draw = ImageDraw.Draw(image)
    for y in range(h):
        draw.line([(0, y), (w - 1, y)], fill=(90 + y, 110 + y, 200))
    draw.rectangle([2 + 3 * k, h // 3, 10 + 3 * k, h // 3 + 8], fill=(220, 40, 40))
    return image


def gif_frames(path):
    """(frames as RGB images, durations in ms, info of the first frame) of a GIF."""
    with Image.open(path) as gif:
        info = dict(gif.info)
        frames, durations = [], []
        for i in range(gif.n_frames):
            gif.seek(i)
            durations.append(gif.info["duration"])
            frames.append(gif.convert("RGB"))
    return frames, durations, info


def differ(a, b):
    return ImageChops.difference(a, b).getbbox() is not None


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """tempfile's directory moved under tmp_path, to see what temporary files are left."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def test_gif_from_images_has_every_frame_its_size_and_duration(tmp_path):
    path = tmp_path / "m.gif"
    assert movie.write_gif([frame(k) for k in range(12)], path, fps=25) == str(path)
    frames, durations, info = gif_frames(path)
    assert len(frames) == 12
    assert all(f.size == (64, 48) for f in frames)
    assert durations == [40] * 12
    assert info["loop"] == 0                         # plays forever
    assert all(differ(frames[k], frames[k + 1]) for k in range(11))
    # the colours survive the palette: the square is red, where it was drawn
    assert frames[5].getpixel((2 + 15 + 4, 16 + 4))[0] > 180
    assert [p.name for p in tmp_path.iterdir()] == ["m.gif"]
    mask = os.umask(0)
    os.umask(mask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~mask     # not the temporary file's 0o600


def test_gif_from_png_files_plays_once_at_its_fps(tmp_path):
    paths = []
    for k in range(5):
        paths.append(tmp_path / f"f{k}.png")
        frame(k).save(paths[-1])
    path = tmp_path / "once.gif"
    movie.write_gif([str(p) for p in paths], path, fps=10, loop=False)
    frames, durations, info = gif_frames(path)
    assert len(frames) == 5 and durations == [100] * 5
    assert "loop" not in info


def test_gif_frames_of_other_sizes_are_resized_to_the_first(tmp_path):
    path = tmp_path / "sizes.gif"
    movie.write_gif([frame(0), frame(1, (128, 96)), frame(2, (32, 20))], path)
    frames, _, _ = gif_frames(path)
    assert [f.size for f in frames] == [(64, 48)] * 3


def test_gif_of_a_hundred_vga_frames_stays_small(tmp_path):
    path = tmp_path / "big.gif"
    movie.write_gif([frame(k, (640, 480)) for k in range(100)], path)
    frames, _, _ = gif_frames(path)
    assert len(frames) == 100
    assert os.path.getsize(path) < 1_500_000


def test_gif_needs_frames(tmp_path):
    with pytest.raises(movie.MovieError, match="no frames"):
        movie.write_gif([], tmp_path / "none.gif")
    assert list(tmp_path.iterdir()) == []


class FakeView:
    """Stands in for FreeCAD's 3D view: ``saveImage`` draws the square where ``set_time`` put it."""

    def __init__(self):
        self.k = 0
        self.calls = []

    def set_time(self, t):
        self.k = int(round(10 * t))

    def saveImage(self, path, width, height, background):     # noqa: N802 (FreeCAD's name)
        self.calls.append((width, height, background))
        frame(self.k, (width, height)).save(path)


def test_record_films_each_time_and_cleans_up(tmp_path, private_tmp):
    view = FakeView()
    seen = []
    path = tmp_path / "rec.gif"
    times = [i / 10 for i in range(8)]
    assert movie.record(view, view.set_time, times, path, width=80, height=60, fps=20,
                        progress=seen.append) == str(path)
    frames, durations, _ = gif_frames(path)
    assert len(frames) == 8 and durations == [50] * 8
    assert all(f.size == (80, 60) for f in frames)
    assert all(differ(frames[k], frames[k + 1]) for k in range(7))
    assert view.calls == [(80, 60, "Current")] * 8
    assert seen == sorted(seen) and seen[-1] == 1.0 and len(seen) == 9 and 0 < seen[0] < 1
    assert list(private_tmp.iterdir()) == []         # the frames are gone
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rec.gif", "tmp"]


def test_cancelled_recording_leaves_no_file(tmp_path, private_tmp):
    view = FakeView()
    path = tmp_path / "rec.gif"
    with pytest.raises(movie.Cancelled):
        movie.record(view, view.set_time, [i / 10 for i in range(8)], path,
                     cancel=lambda: len(view.calls) >= 3)
    assert len(view.calls) == 3
    assert not path.exists()
    assert list(private_tmp.iterdir()) == []
    assert [p.name for p in tmp_path.iterdir()] == ["tmp"]


def test_record_refuses_other_formats_before_the_first_frame(tmp_path):
    view = FakeView()
    with pytest.raises(movie.MovieError, match=r"\.gif, \.mp4"):
        movie.record(view, view.set_time, [0.0], tmp_path / "m.avi")
    with pytest.raises(movie.MovieError, match="no frame times"):
        movie.record(view, view.set_time, [], tmp_path / "m.gif")
    assert view.calls == []


def test_mp4_without_ffmpeg_says_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.setattr(movie.shutil, "which", lambda name: None)
    with pytest.raises(movie.MovieError) as info:
        movie.write_mp4([frame(0)], tmp_path / "m.mp4")
    assert str(info.value) == ("MP4 export needs ffmpeg (apt install ffmpeg); "
                               "GIF export works without it")
    view = FakeView()
    with pytest.raises(movie.MovieError, match="needs ffmpeg"):
        movie.record(view, view.set_time, [0.0, 0.1], tmp_path / "m.mp4")
    assert view.calls == [] and list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not HAVE_FFMPEG, reason="ffmpeg is not installed (apt install ffmpeg): "
                                            "MP4 export needs it, so this test cannot run")
def test_mp4_with_ffmpeg(tmp_path, private_tmp):
    path = tmp_path / "m.mp4"
    # odd size: padded to even for yuv420p
    movie.write_mp4([frame(k, (65, 47)) for k in range(10)], path, fps=25)
    data = path.read_bytes()
    assert data[4:8] == b"ftyp" and len(data) > 1000
    assert list(private_tmp.iterdir()) == []
    ffprobe = shutil.which("ffprobe")
    if ffprobe:
        import subprocess
        out = subprocess.run([ffprobe, "-v", "error", "-count_frames", "-select_streams", "v:0",
                              "-show_entries", "stream=nb_read_frames,width,height,pix_fmt",
                              "-of", "default=nw=1", str(path)],
                             capture_output=True, text=True, check=True).stdout
        assert "nb_read_frames=10" in out and "width=66" in out and "height=48" in out
        assert "pix_fmt=yuv420p" in out
