"""Turn reports in Markdown (and, through it, BBCode), drawn from the report dict of
`tracker.report.build_report`."""

from __future__ import annotations

import re
from typing import Any

from tracker.reports.text import (
    BATTLE_RULES,
    battle_declaration,
    battle_heading,
    battle_result,
    dice_text,
    fleet_rows,
    has_actions,
    move_text,
    phase_name,
    research_result,
    roll_line,
    step_text,
    target_text,
    tech_name,
    trade_rows,
    turn_title,
    type_name,
    undo_text,
    undone_listing,
)

# ----- Markdown -----

# Characters that could start emphasis, code, links, strikethrough, a table cell or (a "<"
# before a letter, "/", "!" or "?") raw HTML and autolinks.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~]|<(?=[A-Za-z/!?]))")


def md(text: object) -> str:
    """Text safe inside Markdown (and a table cell): no markup, no HTML, one line."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def _struck(text: str, undone_by: int | None) -> str:
    return f"~~{text}~~ *(undone by event {undone_by})*" if undone_by else text


def _md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def _md_cells(cells: list[str], undone_by: int | None) -> list[str]:
    if not undone_by:
        return cells
    out = [f"~~{c}~~" if c else c for c in cells]
    out[-1] += f" *(undone by event {undone_by})*"
    return out


def _md_rolls(rolls: list[dict[str, Any]]) -> list[str]:
    rows = [
        _md_cells(
            [
                str(r["roll"]),
                md(r["roller"]),
                md(r["purpose"]),
                md(r["rule"]),
                md(dice_text(r)),
                md(target_text(r)) or "-",
                md(r["outcome"]) or "-",
            ],
            r["undone_by"],
        )
        for r in rolls
    ]
    return _md_table(["Roll", "By", "Why", "Rule", "Dice", "Target", "Outcome"], rows)


def _md_turn(report: dict[str, Any], turn: dict[str, Any], level: int) -> list[str]:
    h = "#" * level
    out: list[str] = []
    span = f"events {turn['first_seq']}-{turn['last_seq']}" if turn["first_seq"] is not None else "no events"
    if level > 2:  # in a campaign report; a turn report's header line says it
        out.append(f"Phasing nation: **{md(turn['nation'])}** · round {turn['round']} · {span}")
        out.append("")
    if any(u["override"] for u in turn["undos"]):
        out += ["> **Override undo:** dice rolls were taken back in this turn (see *Undos*).", ""]
    if not has_actions(turn):
        out += ["Nothing but phase changes was recorded in this turn.", ""]
    if turn["research"]:
        out += [f"{h} Research", ""]
        rows = [
            _md_cells(
                [
                    md(r["nation"]),
                    md(tech_name(r["technology"])),
                    str(r["cost"]),
                    md(dice_text(r["roll"])) if r["roll"] else "-",
                    md(target_text(r["roll"])) if r["roll"] else "-",
                    md(research_result(r)),
                    str(r["seq"]),
                ],
                r["undone_by"],
            )
            for r in turn["research"]
        ]
        out += _md_table(["Nation", "Technology", "Cost", "Dice", "Needed", "Result", "Event"], rows) + [""]
    if turn["moves"]:
        out += [f"{h} Moves", ""]
        for m in turn["moves"]:
            out.append(
                f"- {md(phase_name(m['phase']))}: {_struck(md(move_text(m)), m['undone_by'])} (event {m['seq']})"
            )
        out.append("")
    if turn["ntr_placed"]:
        out += [f"{h} NTR placed", ""]
        for p in turn["ntr_placed"]:
            text = md(f"{p['nation']} places {p['count']} NTR in {p['zone']}")
            out.append(f"- {_struck(text, p['undone_by'])} (event {p['seq']})")
        out.append("")
    if turn["purchases"]:
        out += [f"{h} Purchases and placement", ""]
        for p in turn["purchases"]:
            out.append(f"- {_struck(md(p['summary']), p['undone_by'])} ({md(p['rule'])}, event {p['seq']})")
        for nation, waiting in turn["unplaced"].items():
            what = ", ".join(f"{c} {t}" for t, c in waiting.items())
            out.append(f"- Bought by {md(nation)} and not yet placed: {md(what)} (PU2)")
        out.append("")
    if turn["adjustments"]:
        out += [f"{h} Adjustments", ""]
        for a in turn["adjustments"]:
            out.append(f"- {_struck(md(a['summary']), a['undone_by'])} (AD1, event {a['seq']})")
        out.append("")
    shown = {b["battle"] for b in turn["battles"]}
    for b in turn["battles"]:
        # Each battle once: its declaration, then every roll and step in the order recorded,
        # one line each, then the result (no separate table of its dice).
        out += [f"{h} {md(battle_heading(b))}", ""]
        rule = BATTLE_RULES.get(b["kind"], "CV1")
        out.append(_struck(md(battle_declaration(b)), b["undone_by"]) + f" ({rule}, event {b['seq']})")
        out.append("")
        lines = [(r["seq"], f"- {_struck(md(roll_line(r)), r['undone_by'])} ({md(r['rule'])})") for r in b["rolls"]]
        lines += [(s["seq"], f"- {_struck(md(step_text(s)), s['undone_by'])} ({md(s['rule'])})") for s in b["steps"]]
        out += [line for _, line in sorted(lines, key=lambda x: x[0])]
        if lines:
            out.append("")
        out += [f"**Result:** {md(battle_result(b))}", ""]
    # Casualties and NTR lost in the battles above are in their results already.
    casualties = [c for c in turn["casualties"] if c["battle"] not in shown]
    if casualties:
        out += [f"{h} Other casualties", ""]
        rows = [
            _md_cells(
                [
                    md(c["unit"]),
                    md(type_name(c["type"])),
                    md(c["nation"]),
                    c["result"],
                    md(c["rule"]),
                    str(c["seq"]),
                ],
                c["undone_by"],
            )
            for c in casualties
        ]
        out += _md_table(["Unit", "Type", "Nation", "Result", "Rule", "Event"], rows) + [""]
    ntr_lost = [n for n in turn["ntr_lost"] if n["battle"] not in shown]
    if ntr_lost:
        out += [f"{h} NTR lost", ""]
        rows = [
            _md_cells(
                [md(n["nation"]), md(n["zone"]), str(n["count"]), str(n["rolled"]), str(n["battle"]), str(n["seq"])],
                n["undone_by"],
            )
            for n in ntr_lost
        ]
        out += _md_table(["Nation", "Zone", "Lost", "Rolled", "Battle", "Event"], rows) + [""]
    if turn["resources"]:
        out += [f"{h} Resources collected", ""]
        rows = [
            _md_cells(
                [
                    md(c["nation"]),
                    str(c["ntr_value"]),
                    str(c["income"]),
                    str(c["lost"]),
                    f"**{c['collected']}**",
                    str(c["balance"]),
                    str(c["seq"]),
                ],
                c["undone_by"],
            )
            for c in turn["resources"]
        ]
        header = ["Nation", "From NTR", "Other income", "NTR lost to convoys", "Collected", "Balance", "Event"]
        out += _md_table(header, rows) + [""]
    if turn["undos"]:
        out += [f"{h} Undos", ""]
        for u in turn["undos"]:
            label = "**OVERRIDE undo**" if u["override"] else "Undo"
            text = f"{label}: {md(undo_text(u))}"
            if u["reason"]:
                text += f". Reason: *{md(u['reason'])}*"
            if u["turn"] != turn["turn"]:
                text += f" (recorded in turn {u['turn']})"
            out.append(f"- {_struck(text, u['undone_by'])}")
            events, phase_changes = undone_listing(u)
            for e in events:
                out.append(
                    f"  - ~~{md(e['summary'])}~~ (turn {e['turn']}, {md(e['rule'] or e['kind'])}, event {e['seq']})"
                )
            if phase_changes:
                out.append(f"  - ~~{phase_changes} phase change(s)~~")
        out.append("")
    if turn["dice_record"]:
        out += [f"{h} Dice switches, overrides and rerolls", ""]
        for o in turn["dice_record"]:
            out.append(f"- {_struck(md(o['summary']), o['undone_by'])} ({md(o['rule'])}, event {o['seq']})")
        out.append("")
    if turn["other"]:
        out += [f"{h} Other events", ""]
        for o in turn["other"]:
            out.append(f"- {_struck(md(o['summary']), o['undone_by'])} ({md(o['rule'])}, event {o['seq']})")
        out.append("")
    where = f"after event {turn['end']['seq']}"
    header, rows = fleet_rows(report, turn)
    out += [f"{h} Forces at the end of the turn ({where})", ""]
    out += _md_table([md(c) for c in header], [[md(c) for c in row] for row in rows]) + [""]
    header, rows = trade_rows(report, turn)
    out += [f"{h} Trade and resources at the end of the turn", ""]
    out += _md_table([md(c) for c in header], [[md(c) for c in row] for row in rows]) + [""]
    if turn["end"].get("hash"):
        head = f"{turn['end']['seq']}:{turn['end']['hash']}"
        out += [f"Log head after event {turn['end']['seq']}: `{head}` (check with `tracker verify --head {head}`)", ""]
    return out


def report_meta(report: dict[str, Any], escape: Any) -> str:
    """The line under the title: what the report covers first, then where the campaign is now."""
    c, pos = report["campaign"], report["position"]
    if report["scope"] == "turn":
        turn = report["turns"][0]
        covers = f"turn {turn['turn']} ({turn['nation']}, round {turn['round']})"
        if turn["first_seq"] is not None:
            covers += f", events {turn['first_seq']}-{turn['last_seq']}"
    else:
        covers = f"turns 1-{len(report['turns'])}"
    now = f"turn {pos['turn']}, {pos['nation']}, {phase_name(pos['phase'])} (event {pos['seq']})"
    return (
        f"Report of {escape(covers)} · {escape(c['scenario_title'])} · ruleset {escape(c['ruleset'])} · "
        f"{escape(c['dice_mode'])} dice · the campaign is now at {escape(now)}"
    )


def render_markdown(report: dict[str, Any]) -> str:
    c = report["campaign"]
    out: list[str] = []
    if report["scope"] == "turn":
        turn = report["turns"][0]
        out += [f"# {md(c['name'])}: {md(turn_title(turn))}", ""]
    else:
        out += [f"# {md(c['name'])}: campaign report, turns 1-{len(report['turns'])}", ""]
    out += [report_meta(report, md), ""]
    if report["scope"] == "turn":
        out += _md_turn(report, report["turns"][0], 2)
    else:
        out += ["## Progress", "", "Each cell: resources / NTR at sea / units at the end of the turn.", ""]
        nations = c["turn_order"]
        rows = []
        for entry in report["series"]:
            cells = [str(entry["turn"]), f"{entry['round']}", md(entry["nation"])]
            for n in nations:
                f = entry["nations"][n]
                cells.append(f"{f['balance']} / {f['ntr_at_sea']} / {f['units']}")
            rows.append(cells)
        out += _md_table(["Turn", "Round", "Phasing", *[md(n) for n in nations]], rows) + [""]
        for turn in report["turns"]:
            out += [f"## {md(turn_title(turn))}", ""]
            out += _md_turn(report, turn, 3)
    out += _md_luck(report)
    return "\n".join(out).rstrip("\n") + "\n"


def _md_luck(report: dict[str, Any]) -> list[str]:
    """The luck tables: expected / actual per nation and turn, each roll at its odds; then each
    battle's percentile for its attacker, from the battle's odds at its first roll."""
    from tracker.analysis.luck import rows_for

    luck = report.get("luck")
    if not luck:
        return []
    rows = [r for r in rows_for(luck) if any(not c.startswith("0.00 / 0") for c in r[2:])]
    battles = luck.get("battles", [])
    if not rows and not battles:
        return []
    out = ["## Luck", ""]
    if rows:
        header = ["Nation", "Turn", *(md(words) for words in luck["metrics"].values())]
        note = "Expected / actual, each roll at its odds when it was rolled; units at each battle's odds."
        out += [note, ""] + _md_table(header, [[md(c) for c in r] for r in rows]) + [""]
    if battles:
        note = "Each battle's percentile for its attacker, from its odds at its first roll (50%: as expected)."
        header = ["Battle", "Turn", "Zone", "Attacker", "Defender", "Percentile", "Attacker lost", "Defender lost"]
        table = [
            [
                f"{b['battle']} ({b['kind']})",
                str(b["turn"]),
                md(b["zone"]),
                md(b["attacker"]),
                md(b["defender"]),
                f"{b['percentile']:.0%}",
                f"{b['actual']['attacker_units_lost']} ({b['expected']['attacker_units_lost']:.2f} expected)",
                f"{b['actual']['defender_units_lost']} ({b['expected']['defender_units_lost']:.2f} expected)",
            ]
            for b in battles
        ]
        out += [note, ""] + _md_table(header, table) + [""]
    return out
