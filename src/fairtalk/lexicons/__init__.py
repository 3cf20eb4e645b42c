"""Word-pair lexicons (gender, race, a user's axis) and attribute word lists, loaded and validated.

The built-in data are typed from Appendix A of Liu et al. (COLING 2020), "Does Gender Matter?
Towards Fairness in Dialogue Systems", and ship as package data in two variants:

``paper``
    The lists exactly as printed (``gender-paper.tsv``, ``race-paper.tsv``); only PDF-extraction
    damage is repaired.
``default``
    Cleaned lists (``gender.tsv``, ``race.tsv``); every change is documented in the file header.

File format (shared by the built-in files and users' ``--lexicon my_axis.tsv``)::

    # axis: religion
    # groups: christian muslim
    # attributes: pleasant unpleasant
    church<TAB>mosque
    bible - quran

One pair a line: a group-A word or phrase and its group-B counterpart, separated by a TAB or by
``" - "`` (the format of the DialogueFairness word files). ``a -> b`` swaps one way only (a to b;
``a <- b``: b to a; in a TAB file the arrow is a middle column), so that ``guy -> girl`` leaves
``girl`` with its one counterpart ``boy``. Entries keep their case; runs of whitespace collapse
to one space. ``#`` lines are comments; ``# key: value`` lines before the first pair are metadata
(``axis``, ``groups``, ``attributes``, ``variant``, ``both-sides``, and for word sense ``keep``,
``needs-determiner``, ``needs-cue``, ``markers-a``, ``markers-b``; the last five take
comma-separated lists and may repeat). ``# groups:`` is required (a file without it is refused,
naming the line of its first pair); a file without ``# axis:`` takes its axis from the file name;
a user's file is always variant ``"custom"``.

Multi-way files (``# groups:`` with three or more names, one TAB-separated column a group, ``-``
for no counterpart; the built-in ``religion.tsv``, or a user's): :func:`expand_axis` runs the
first group against each other one, ``PATH:A-B`` (like ``religion:christian-muslim``) loads the
lexicon of two groups, and :func:`load_lexicon` refuses the bare file, naming the pairs.

Word sense: ``# keep: oh my god, spider man`` lists fixed phrases whose words are never swapped;
``# needs-determiner: man, guy`` lists terms swapped only after a determiner or possessive (``the
man``, not ``oh man``); ``# needs-cue: sick, lit = that's, it's`` lists terms swapped only where
they stand alone as a sentence (``Sick!``) or right after one of the cues after ``=`` (``that's
sick``, not ``I feel sick``; without ``=``, alone only); ``# markers-a:``/``# markers-b:`` list
further words of each group that are not swapped but that the validity check
(``pairs_check.json``) looks for on the swapped side.

Validation (each error is a :class:`~fairtalk.errors.LexiconError` naming ``file:line``): a
malformed line (no separator, too many columns), an empty side, a duplicate pair, a word or
phrase on both sides, a ``needs-determiner`` or ``needs-cue`` word no pair holds, and a
character XML 1.0 forbids (a control character but TAB, U+FFFE, U+FFFF), which no report (the
JUnit XML, the job summary) could show. An error says where and why, never quotes the line.
Comparisons are case-insensitive. A word on both sides leaves a swap no direction, so it is an
error unless the file's ``# both-sides:`` metadata lists it. The printed race list has two such
words (``mad``: "a lot - mad" and "mad - tight"; ``police``: the reversed "po po - police");
``race-paper.tsv`` declares them so that it loads exactly as printed, and the default
``race.tsv`` fixes both. A word may have several counterparts (many-to-many).
"""

from __future__ import annotations

from fairtalk.lexicons._format import AttributeList, Lexicon, WordPair, lexicon_text
from fairtalk.lexicons._identity import identity_masker, identity_terms, mask_identity, plural
from fairtalk.lexicons._load import (
    AXES,
    ENTRY_POINT_GROUP,
    axis_groups,
    axis_names,
    builtin_attribute_lists,
    builtin_axes,
    expand_axis,
    lexicon_by_name,
    load_attributes,
    load_lexicon,
    multiway_message,
    refuse_bare_multiway,
    register_axis,
    terms_on_both_sides,
)
from fairtalk.lexicons._record import lexicon_record, recorded_lexicon

__all__ = [
    "identity_masker",
    "identity_terms",
    "mask_identity",
    "plural",
    "AXES",
    "ENTRY_POINT_GROUP",
    "AttributeList",
    "Lexicon",
    "WordPair",
    "axis_groups",
    "axis_names",
    "builtin_attribute_lists",
    "builtin_axes",
    "expand_axis",
    "lexicon_by_name",
    "lexicon_record",
    "lexicon_text",
    "load_attributes",
    "load_lexicon",
    "multiway_message",
    "recorded_lexicon",
    "refuse_bare_multiway",
    "register_axis",
    "terms_on_both_sides",
]
