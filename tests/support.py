"""Helpers the test suites share for getting a campaign to the position a test needs."""

from __future__ import annotations

from domain.campaign import Campaign


def advance(c: Campaign, confirm_losses: bool = False) -> None:
    """`next` as a group that wants to move on plays it: every enemy that may still attack
    convoys passes (CV1, T4), then the phase ends."""
    for nation in c.convoy_attacks_open():
        c.convoy_pass(nation)
    c.advance(confirm_losses)

