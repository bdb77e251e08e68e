"""Defects the fuzz campaign found (issue 33.7, benchmarks/fuzz_campaign.py, seed 20261129),
each as the campaign's command line."""

from MultibodyWB.solver.cli import main


def test_de_study_with_fewer_evaluations_than_its_population(tmp_path, capsys):
    """``study --method de --max-evaluations 4``: the population (8 per parameter) is cut to
    the evaluations left; scipy's differential evolution must still get a score for each of
    its members (it was an internal error, "func(x, *args) must return a scalar value")."""
    model = tmp_path / "qc.mbs.xml"
    assert main(["example", "quarter_car", "-o", str(model)]) == 0
    out = tmp_path / "s.csv"
    code = main(["study", str(model), "--param", "Suspension.Stiffness=1e4:6e4:2",
                 "--objective", "rms(Hull.az)", "--t-end", "0.01", "--step", "1e-4",
                 "--output-step", "1e-3", "--method", "de", "--max-evaluations", "4",
                 "--serial", "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "internal error" not in captured.err
    rows = out.read_text().splitlines()
    assert len(rows) == 1 + 4                  # the header and the 4 evaluations allowed
    assert "most evaluations" in captured.out, captured.out
