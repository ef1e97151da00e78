"""The battle procedures as pure state machines: convoy battles (CV), interceptions (SM), ASW
combat (AS) and naval battles (NC), sharing the volley of selective and non-selective fire
(HA1-HA7).

Each procedure is a frozen, hashable state value and three functions of it: `need` (who must
decide or roll next, the legal choices and the default, or the outcome once it has ended),
`decide` (one decision) and `roll` (the dice of one roll step, given as the number of dice of
each group showing each result). No I/O, no randomness, no English: the referee records the
facts they return, and the odds enumerate them.
"""
