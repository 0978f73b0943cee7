"""The main job: `make demo` plays the design's story offline and shows what each audience may know."""

from __future__ import annotations

import persona_memory as pm
from persona_memory.demo import run_demo


async def test_the_demo_tells_the_story_and_does_not_replay_it(tmp_path, capsys):
    settings = pm.load_settings(None, {"storage.path": str(tmp_path / "demo.db")})
    await run_demo(settings)
    out = capsys.readouterr().out
    assert 'UPDATE u:42 sold the flat in Xuhui' in out
    assert '(closes "u:42 bought a flat in Xuhui' in out
    assert "toast for Dan: Warren noted: bought a flat in Xuhui" in out
    assert "Warren said he would send u:42 the 1988 shareholder letter" in out
    group = out.split("proven scope: world facts only) — warren's block ==")[1].split("==")[0]
    assert "u:42" not in group and "u:17" not in group  # nothing personal in the group room
    cara = out.split("Cara opens her chat again — warren's block ==")[1].split("==")[0]
    assert "u:17 prefers index funds" in cara and "u:42" not in cara

    await run_demo(settings)
    again = capsys.readouterr().out
    assert "already holds the demo's story" in again
    assert "UPDATE" not in again and "ADD" not in again
