"""The tracker's commands by name: the module and attribute each is loaded from (only when it
runs, so that `tracker --help` imports none of them) and its one-line help."""

from __future__ import annotations

# name: (module under tracker., attribute, one-line help). tests/test_cli_startup.py checks
# that each line is the command's own help, so the listing never drifts from the commands.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "adjust": (
        "cli.commands.economy",
        "adjust",
        "Record what the tracker does not model (land combat, territory changes, agreed events) as one "
        "explicit adjustment with a reason (AD1); --enter brings a neutral nation's entry into the war "
        "forward (F8).",
    ),
    "approve": (
        "cli.commands.players",
        "approve",
        "Approve override request REQUEST on a league server, as a player of the other side or the "
        "referee (RK3): the override is then recorded with your agreement.",
    ),
    "asw": (
        "cli.commands.naval",
        "asw_group",
        "ASW combat against enemy submarines in one's own naval combat phase (AS1-AS5).",
    ),
    "battle": (
        "cli.commands.naval",
        "battle_group",
        "Naval battles (NC1-NC5), and the targets, screens, dice and casualties of every fight (HA1-HA7).",
    ),
    "buy": (
        "cli.commands.economy",
        "buy",
        "Buy units in the purchase phase at the ruleset's cost (PU1, PU3); undo takes a purchase back "
        "until the phase ends.",
    ),
    "campaign": (
        "cli.commands.campaign_public",
        "campaign_group",
        "Settings of a served campaign: whether anyone may read it without a token.",
    ),
    "campaigns": ("cli.commands.campaign", "campaigns", "List the campaigns in the database."),
    "convoy": ("cli.commands.convoy", "convoy", "Convoy battles in the NTR owner's collect resources phase (CV1-CV7)."),
    "db": (
        "cli.commands.db",
        "db_group",
        "The database's side tables: which revision they are at, and upgrading them to this tracker's.",
    ),
    "demo": (
        "cli.commands.campaign",
        "demo",
        "Play a short scripted campaign with auto dice and narrate it, in a new database.",
    ),
    "dice": ("cli.commands.turn", "dice", "Dice seeds and commitments."),
    "explain": (
        "cli.commands.history",
        "explain",
        "Explain one event: its rules, dice and target numbers, choices, what it changed, undo status.",
    ),
    "export": (
        "cli.commands.transfer",
        "export_command",
        "Write the campaign's events with their hashes to FILE as JSON lines ('-' for stdout).",
    ),
    "import": (
        "cli.commands.transfer",
        "import_command",
        "Verify an export FILE ('-' for stdin) and record it as a new campaign in this database; a file "
        "for a campaign already here (a full export, or `export --since`) continues it.",
    ),
    "inbox": (
        "cli.commands.inbox",
        "inbox",
        "List what the game waits for from you in every campaign you play (--campaign: in that one): "
        "whose decision or roll, under which rule, and the command that answers it.",
    ),
    "intercept": (
        "cli.commands.naval",
        "intercept",
        "Interceptions of submarine groups passing hostile zones (SM2-SM5); `tracker move` starts them.",
    ),
    "log": ("cli.commands.history", "log", "List the campaign's events in order, with rule IDs, filtered as asked."),
    "luck": (
        "cli.commands.odds",
        "luck",
        "Luck: per nation and turn, what its dice should have brought against what they brought.",
    ),
    "map": (
        "cli.commands.board",
        "map_command",
        "Show the campaign's map: every zone, what it touches, its owner now and whether it is a port, who "
        "is there and the NTR.",
    ),
    "move": (
        "cli.commands.turn",
        "move",
        "Move units together along a path of adjacent zones; a submarine group stops at a hostile zone "
        "where the enemy may search it (SM2: see `tracker intercept`).",
    ),
    "new": ("cli.commands.campaign", "new", "Create a campaign."),
    "next": (
        "cli.commands.turn",
        "next_phase",
        "Close the current phase and open the next (collecting resources at the end of a turn); refused "
        "while the phase still requires something (T4: `tracker pending` lists it).",
    ),
    "notify": (
        "cli.commands.notify",
        "notify",
        "Tell players when the game waits for them: webhook (JSON, Discord, Slack) and e-mail channels "
        "of a campaign, delivered by `tracker serve`.",
    ),
    "ntr": ("cli.commands.turn", "ntr", "Naval trade resources."),
    "odds": (
        "cli.commands.odds",
        "odds",
        "Exact odds: every outcome with its probability, expected values and standard deviations.",
    ),
    "overrides": (
        "cli.commands.players",
        "overrides",
        "List a league server's override requests: who asked what, whose agreement, approved or waiting.",
    ),
    "pending": (
        "cli.commands.turn",
        "pending",
        "List what the game waits for: whose decision or roll, under which rule, and the command that answers it.",
    ),
    "place": (
        "cli.commands.economy",
        "place",
        "Place units bought this turn in the placement phase (PU2); they get the next unused IDs.",
    ),
    "players": (
        "cli.commands.players",
        "players",
        "The players of a campaign, for `tracker serve`: tokens bound to nations (PL1, PL2).",
    ),
    "projections": ("cli.commands.history", "projections", "The read models behind state, log, explain and reports."),
    "redo": (
        "cli.commands.history",
        "redo",
        "Re-record the most recently undone action with the dice it rolled (RK4).",
    ),
    "replay": (
        "cli.commands.history",
        "replay",
        "Step through the log with the board beside each event, forward and backward, roll by roll and "
        "battle by battle (keys in a terminal), or print chosen frames with --to / --battle.",
    ),
    "report": (
        "cli.commands.report",
        "report",
        "A turn report: moves, battles with every die, casualties, NTR lost, resources, research, undos "
        "(undone events struck through) and the fleet and trade tables at the end of the turn.",
    ),
    "research": ("cli.commands.turn", "research", "Make a research roll in the research phase (TE1)."),
    "rulesets": ("cli.commands.campaign", "rulesets", "List the built-in rulesets."),
    "scenario": (
        "cli.commands.scenario",
        "scenario_group",
        "Author a scenario file: check it, draw its map, start one from a template.",
    ),
    "scenarios": ("cli.commands.campaign", "scenarios", "List the built-in scenarios."),
    "serve": (
        "server.command",
        "serve",
        "Serve the campaigns of a database to a group: a JSON API under /api and the browser viewer at /,"
        " on SQLite or PostgreSQL.",
    ),
    "shell": (
        "cli.shell",
        "shell_command",
        "An interactive session on one campaign: every command without `tracker`, tab completion from the"
        " campaign, history, and a prompt showing round, nation and phase.",
    ),
    "show": (
        "cli.commands.board",
        "show_command",
        "Show one zone: what it is, what it touches, every unit there, the NTR and the battles open there.",
    ),
    "state": (
        "cli.commands.turn",
        "state",
        "Show the board: turn position, units by zone, NTR, resources, technology; now or at any point.",
    ),
    "stats": (
        "cli.commands.report",
        "stats",
        "Per nation per national turn: resources, NTR at sea, NTR lost, units, fleet cost, technology "
        "(the figures at the end of each turn; the current turn so far).",
    ),
    "undo": (
        "cli.commands.history",
        "undo",
        "Undo the last action (or back to an event) with a compensating event (RK3).",
    ),
    "units": (
        "cli.commands.board",
        "units_command",
        "Show the unit types of the campaign's ruleset: combat values, move or range, hits, cost, searches.",
    ),
    "wait": (
        "cli.commands.inbox",
        "wait",
        "Wait until the game waits for you (in every campaign you play, or --campaign), then print "
        "what it waits for, as `tracker inbox` does.",
    ),
    "verify": (
        "cli.commands.history",
        "verify",
        "Check the hash chain, re-derive every auto die whose seed is available, check every snapshot "
        "against the log, the dice seed against its commitment and rows beyond the last event; print the "
        "head (last event and hash) to post, or check one posted earlier.",
    ),
}
