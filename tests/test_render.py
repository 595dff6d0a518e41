"""Pictures from the model's one look declaration: text, SVG, PNG, GIF replays, Jupyter hooks.

The SVG checks parse the document (xml.etree) and count what was drawn against what the
state says, computed here independently from the instance data (piece letters, tile values,
givens, clues), not from the look.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from helpers import FAYAA, ROOT, write_klotski
from test_cli import run_cli

from puzzleplan import api, render
from puzzleplan.lang import Look, ModelError, Tile
from puzzleplan.lang.errors import EXIT_BAD_OPTION, EXIT_BAD_PLAN, EXIT_OUTPUT

SVG = "{http://www.w3.org/2000/svg}"
INST = ROOT / "instances"


def groups(svg_text: str, kind: str) -> list[ET.Element]:
    root = ET.fromstring(svg_text)
    return [g for g in root.iter(f"{SVG}g") if g.get("class") == kind]


def glyphs(svg_text: str, kind: str) -> list[str]:
    return sorted(g.get("data-glyph") for g in groups(svg_text, kind))


def svg_of(model: str, instance: str, capsys, *extra: str) -> str:
    code, out, err = run_cli(["show", model, instance, "--format", "svg", *extra], capsys)
    assert code == 0, err
    return out


def test_klotski_svg_draws_every_piece_once(capsys):
    loaded = api.load_task("klotski", f"{FAYAA}#fayaa-001")
    letters = sorted(p.letter for p in loaded.data.pieces)
    out = svg_of("klotski", f"{FAYAA}#fayaa-001", capsys)
    assert glyphs(out, "sprite") == letters
    assert groups(out, "cell") == []
    # the target's block is 2x2 cells: its rectangle is about twice a soldier's size
    sizes = {g.get("data-glyph"): float(g.find(f"{SVG}rect").get("width")) for g in groups(out, "sprite")}
    soldier = next(p.letter for p in loaded.data.pieces if (p.h, p.w) == (1, 1))
    assert sizes["A"] > 1.8 * sizes[soldier]


def test_sokoban_svg_draws_walls_boxes_goals_and_the_player(capsys):
    """Counts from the XSB text itself: '#' walls, '$'/'*' boxes, '.'/'+'/'*' goals, one player."""
    board = ["#####", "#@$.#", "#*  #", "#####"]
    text = "\n".join(board)
    out = svg_of_text("sokoban", text, capsys)
    drawn = glyphs(out, "cell")
    assert drawn.count("#") == text.count("#")
    assert drawn.count("$") == text.count("$")                       # boxes off goal
    assert drawn.count("*") == text.count("*")                       # boxes on goal
    assert drawn.count(".") == text.count(".") + text.count("+")     # empty goals
    assert glyphs(out, "sprite") == ["@"]


def test_lightsout_svg_draws_one_cell_per_light_with_its_state(capsys):
    """On/off counts come from the board text ('*' on, '.' off), not from the look."""
    path = INST / "lightsout" / "boards.txt"
    rec = next(b for b in path.read_text(encoding="utf-8").split("\n\n") if "id: cross-3x3" in b)
    rows = [ln for ln in rec.splitlines() if ln and ln[0] in "*."]
    out = svg_of("lightsout", f"{path}#cross-3x3", capsys)
    drawn = glyphs(out, "cell")
    assert drawn.count("*") == sum(r.count("*") for r in rows)
    assert drawn.count(".") == sum(r.count(".") for r in rows)


@pytest.mark.parametrize("level", ["heading-out/030.txt", "going-up/19_2-9.txt", "going-up/28_3-8.txt"])
def test_kwirk_svg_draws_walls_holes_exit_arms_blocks_and_characters(level, capsys):
    """Counts from the map text of FORMAT.md: '#', 'O', 'E', '*', the arms, one sprite per block letter and
    per character digit."""
    path = INST / "kwirk" / level
    lines = path.read_text(encoding="utf-8").splitlines()
    rows = lines[lines.index("map:") + 1:]
    w, h = (int(x) for x in next(ln for ln in lines if ln.startswith("size:")).split()[1:3])
    text = "".join(r[:w] for r in rows[:h])
    out = svg_of("kwirk", str(path), capsys)
    cells = glyphs(out, "cell")
    for ch in "#OE*":
        assert cells.count(ch) == text.count(ch), ch
    assert sum(cells.count(a) for a in "↑→↓←^>v<") == sum(text.count(a) for a in "^>v<")
    digits = sorted(c for c in text if c.isdigit())
    letters = {c for c in text if c.isalpha() and c not in "OEv"}     # 'v' is an arm, not a block
    sprites = glyphs(out, "sprite")
    assert len(sprites) == len(digits) + len(letters)
    assert sorted(g for g in sprites if g.isdigit()) == digits


def svg_of_text(model: str, text: str, capsys) -> str:
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".xsb", delete=False, encoding="utf-8") as f:
        f.write(text + "\n")
    return svg_of(model, f.name, capsys)


def test_sliding_svg_draws_every_tile_but_the_hole(tmp_path, capsys):
    p = tmp_path / "s.txt"
    p.write_text("3 1 2\n0 4 5\n6 7 8\n", encoding="utf-8")
    out = svg_of("sliding", str(p), capsys)
    assert glyphs(out, "cell") == sorted(str(k) for k in range(1, 9))
    root = ET.fromstring(out)
    # tile 3 sits in the top-left cell, i.e. its rectangle is the left-most and top-most
    rects = {g.get("data-glyph"): g.find(f"{SVG}rect") for g in groups(out, "cell")}
    x3, y3 = float(rects["3"].get("x")), float(rects["3"].get("y"))
    assert x3 == min(float(r.get("x")) for r in rects.values())
    assert y3 == min(float(r.get("y")) for r in rects.values())
    assert root.get("width") and root.get("height")


def test_zpg_svg_draws_sand_leaves_and_no_monk_at_the_start(capsys):
    path = INST / "zpg" / "suite-mix-01.txt"
    loaded = api.load_task("zpg", str(path))
    rows = loaded.data.rows
    free = [ch for row in rows for ch in row if ch != "#"]
    out = svg_of("zpg", str(path), capsys)
    cells = glyphs(out, "cell")
    assert len(cells) == len(free)                       # one drawn square per non-rock cell
    assert sorted(ch for ch in free if ch in "yor") == sorted(g for g in cells if g in "yor")
    assert cells.count("S") == free.count("S")
    assert groups(out, "sprite") == []                   # the monk starts outside the garden


def test_skyscraper_svg_draws_clues_and_no_heights_before_solving(capsys):
    path = INST / "skyscraper" / "tatham-4x4-easy-1.txt"
    data = api.load_task("skyscraper", str(path)).data
    clues = sorted(str(v) for side in ("top", "bottom", "left", "right") for v in data[side] if v)
    givens = sorted(str(v) for row in (data["givens"] or []) for v in row if v)
    out = svg_of("skyscraper", str(path), capsys)
    drawn = glyphs(out, "cell")
    assert [g for g in drawn if g != "."] == sorted(clues + givens)
    assert drawn.count(".") == data["n"] ** 2 - len(givens)       # empty cells of the answer grid
    # one heavy frame around the n x n answer grid: 2 horizontal + 2 vertical rules
    rules = [ln for ln in ET.fromstring(out).iter(f"{SVG}line") if ln.get("class") == "rule"]
    assert len(rules) == 4


def test_sudoku_svg_draws_exactly_the_givens(capsys):
    inst = f"{INST / 'sudoku' / 'puzzles.txt'}#1"
    cells = api.load_task("sudoku", inst).data
    out = svg_of("sudoku", inst, capsys)
    assert glyphs(out, "cell") == sorted(str(v) for v in cells if v)
    rules = [ln for ln in ET.fromstring(out).iter(f"{SVG}line") if ln.get("class") == "rule"]
    assert len(rules) == 8                                        # box borders: 4 horizontal, 4 vertical


def test_board_of_a_solved_sudoku_fills_all_81_cells():
    loaded = api.load_task("sudoku", f"{INST / 'sudoku' / 'puzzles.txt'}#1")
    result = api.solve(loaded, "cpsat")
    board = render.Board(loaded.task, result.assignment)
    svg = board._repr_svg_()
    assert len(groups(svg, "cell")) == 81
    text = str(board).splitlines()
    assert len(text) == 9 and all(len(row) == 9 and "." not in row for row in text)


def test_klotski_plan_as_gif_has_one_frame_per_move_and_ends_at_the_goal(tmp_path, capsys):
    PIL = pytest.importorskip("PIL.Image")
    gif = tmp_path / "hdlm.gif"
    code, out, err = run_cli(["show", "klotski", f"{FAYAA}#fayaa-001", "--plan", "--format", "gif",
                              "-o", gif], capsys)
    assert code == 0, err
    assert out == ""
    im = PIL.open(gif)
    assert im.n_frames == 82                              # the start + 81 moves (the published optimum)
    # the same replay as SVG: the last frame has A on its goal cell (bottom middle of 4x5)
    loaded = api.load_task("klotski", f"{FAYAA}#fayaa-001")
    result = api.solve(loaded, "bfs")
    rep = render.Replay(loaded.task, result.plan)
    assert len(rep) == 82 == result.cost + 1
    last = str(rep).split("\n\n")[-1].splitlines()
    assert last[0].startswith("move 81:")
    assert [row[1:3] for row in last[4:6]] == ["AA", "AA"]
    steps = render.Replay(loaded.task, result.plan, per="step")
    assert len(steps) == len(result.plan) + 1 > len(rep)
    assert "<svg" in rep._repr_html_()


def test_png_board_and_strip(tmp_path, capsys):
    PIL = pytest.importorskip("PIL.Image")
    p = write_klotski(tmp_path / "t.txt", ["AB.", "CDE", "F.G"], size=(3, 3), goal=(2, 2))
    one, strip = tmp_path / "one.png", tmp_path / "strip.png"
    assert run_cli(["show", "klotski", p, "-O", "metric=steps", "-f", "png", "-o", one], capsys)[0] == 0
    code, _, err = run_cli(["show", "klotski", p, "-O", "metric=steps", "--plan", "-f", "png", "-o", strip,
                            "--frames", "step"], capsys)
    assert code == 0, err
    a, b = PIL.open(one), PIL.open(strip)
    assert a.format == b.format == "PNG"
    assert b.size[0] > a.size[0]                          # several frames side by side


def test_text_format_uses_the_look(tmp_path, capsys):
    p = write_klotski(tmp_path / "t.txt", ["AB.", "CDE", "F.G"], size=(3, 3), goal=(2, 2))
    code, out, _ = run_cli(["show", "klotski", p, "-f", "text"], capsys)
    assert code == 0 and out.splitlines() == ["AB.", "CDE", "F.G"]


def test_errors_are_one_line_with_documented_codes(tmp_path, capsys):
    p = write_klotski(tmp_path / "t.txt", ["AB.", "CDE", "F.G"], size=(3, 3), goal=(2, 2))
    code, _, err = run_cli(["show", "klotski", p, "-f", "png"], capsys)
    assert code == EXIT_BAD_OPTION and err.count("\n") == 1 and "-o" in err
    code, _, err = run_cli(["show", "klotski", p, "-f", "gif", "-o", tmp_path / "x.gif"], capsys)
    assert code == EXIT_BAD_OPTION and "--plan" in err
    code, _, err = run_cli(["show", "klotski", p, "-f", "svg", "-o", tmp_path / "no" / "dir.svg"], capsys)
    assert code == EXIT_OUTPUT and err.count("\n") == 1
    bad = tmp_path / "plan.txt"
    bad.write_text("B right\n", encoding="utf-8")
    code, _, err = run_cli(["show", "klotski", p, "-O", "metric=steps", "--plan", bad, "-f", "svg"], capsys)
    assert code == EXIT_BAD_PLAN and "goal" in err
    code, _, err = run_cli(["show", "sudoku", f"{INST / 'sudoku' / 'puzzles.txt'}#1", "--plan", "-f", "svg"],
                           capsys)
    assert code == EXIT_BAD_OPTION


def test_model_without_a_look_says_so(tmp_path, capsys):
    inst = tmp_path / "j.txt"
    inst.write_text("a: 3\nb: 5\ntarget: 4\n", encoding="utf-8")
    jugs = ROOT / "tests" / "models" / "jugs.py"
    assert not render.has_look(api.load_task(str(jugs), str(inst)).task)
    code, _, err = run_cli(["show", str(jugs), inst, "-f", "svg"], capsys)
    assert code == EXIT_BAD_OPTION and "look" in err and err.count("\n") == 1
    code, out, _ = run_cli(["show", str(jugs), inst], capsys)      # the plain text display still works
    assert code == 0 and out.strip()


def test_look_declaration_is_checked():
    lk = Look(2, 3)
    with pytest.raises(ModelError):
        lk.cells([1, 2, 3], {1: Tile("x")}, at=[0, 1, 6])
    with pytest.raises(ModelError):
        lk.sprite(0, Tile("x"), size=(3, 1))
    with pytest.raises(ModelError):
        Tile("")


def test_api_picture_for_jupyter():
    loaded = api.load_task("sudoku", f"{INST / 'sudoku' / 'puzzles.txt'}#1")
    start = api.picture(loaded)
    assert len(groups(start._repr_svg_(), "cell")) == sum(1 for v in loaded.data if v)
    solved = api.picture(loaded, api.solve(loaded, "cpsat"))
    assert len(groups(solved._repr_svg_(), "cell")) == 81
    k = api.load_task("klotski", f"{FAYAA}#fayaa-001")
    rep = api.picture(k, api.solve(k, "bfs"), per="move")
    assert isinstance(rep, render.Replay) and len(rep) == 82
    frames = [g for g in ET.fromstring(rep._repr_html_()[5:-6]).iter(f"{SVG}g") if g.get("class") == "frame"]
    assert len(frames) == 82


def test_animate_redraws_frames_in_place_and_prints_them_plainly_off_a_terminal(tmp_path, capsys):
    from puzzleplan import cli

    cli._animate(["ab\ncd", "ef\ngh", "ij\nkl"], 0.0)
    out = capsys.readouterr().out
    # every later frame starts by moving up over the previous one (2 lines) and clearing below
    assert out == "ab\ncd\n" + "\x1b[2F\x1b[J" + "ef\ngh\n" + "\x1b[2F\x1b[J" + "ij\nkl\n"
    p = tmp_path / "s.txt"
    p.write_text("1 2 0\n3 4 5\n6 7 8\n", encoding="utf-8")   # 2 moves from the goal
    plain = run_cli(["show", "sliding", str(p), "--plan", "--format", "text"], capsys)
    animated = run_cli(["show", "sliding", str(p), "--plan", "--animate", "0.01"], capsys)
    assert animated[0] == 0 and animated[1] == plain[1] and "\x1b[" not in animated[1]
