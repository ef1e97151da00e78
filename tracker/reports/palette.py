"""The nations' colours, shared by the map, the charts and the HTML report's legend: one per
nation in turn order, and a darker shade of each for letters on a light box."""

from __future__ import annotations

import functools

# Okabe-Ito's eight colour-blind safe colours, then three of Paul Tol's muted scheme (wine,
# indigo, olive), so that a board of up to eleven nations (great-war-1914 has nine) gives each
# its own; a twelfth takes the first colour again.
PALETTE = (
    "#0072B2",
    "#D55E00",
    "#009E73",
    "#CC79A7",
    "#E69F00",
    "#56B4E9",
    "#F0E442",
    "#000000",
    "#882255",
    "#332288",
    "#999933",
)
# The board map's boxes: a sea zone's fill, a territory's, and the stripes that hatch a neutral
# nation's territory (F8) over the land fill; the map's letters read on all three.
SEA_FILL = "#e3f0fb"
LAND_FILL = "#f3ead7"
NEUTRAL_STRIPE = "#e6dcc3"
# Letters read at this contrast or more on their background (WCAG AA for normal text), and
# lines of a chart at this one (WCAG's for graphics).
TEXT_CONTRAST = 4.5
LINE_CONTRAST = 3.0


def colour_of(index: int) -> str:
    """The colour of the nation at this place in the turn order."""
    return PALETTE[index % len(PALETTE)]


def luminance(colour: str) -> float:
    """The relative luminance of a #rrggbb colour (WCAG 2)."""
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


# Worked out once a process for each colour: every chart of every report asks again.
@functools.cache
def ink(colour: str, backgrounds: tuple[str, ...], contrast: float = TEXT_CONTRAST) -> str:
    """`colour` darkened just enough to be read as text (or, with LINE_CONTRAST, seen as a thin
    line) on every background: the palette's light colours (its yellow, orange, sky blue) are
    fills and borders, not letters."""
    lightest = min(luminance(b) for b in backgrounds)
    if (lightest + 0.05) / (luminance(colour) + 0.05) >= contrast:
        return colour
    r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    for step in range(1, 21):
        shade = 1 - step / 20
        darker = f"#{round(r * shade):02x}{round(g * shade):02x}{round(b * shade):02x}"
        if (lightest + 0.05) / (luminance(darker) + 0.05) >= contrast:
            return darker
    return "#000000"
