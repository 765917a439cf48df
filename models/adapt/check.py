"""Leave-one-out check of an adapted folder's learned wordings: each corrected document is read by the rules with
the wordings learned from the *other* corrected documents, and every field they decide through a learned wording is
compared with the reviewer's value. A field whose learned wordings were right on at least :data:`MIN_RIGHT` held-out
documents and never wrong, each wording taught by at least that many documents, is *checked*: at run time the
shipped calibrators then vouch for it (stages/extraction/adapted.py; docs/adaptation.md, "Routing"). A wording the
whole folder keeps by precision alone (one insurer's among several, taught by as few as :data:`MIN_TAUGHT`
documents) is read on a held-out document it taught with the other documents' teaching, the held-out one counted
toward the folder's rule (:func:`models.adapt.learn.held_out_keeps`): else no document it taught would be read
through it, and its field would stand on other wordings' checks. A wording that
the shipped lexicon prints inside a label of another field of the same kind (日期 in 生效日期 and 签发日期) is
ambiguous on other layouts, whatever the corrected documents show: its field is never checked."""
from __future__ import annotations

import logging
from collections import Counter
from datetime import date
from typing import Any, Optional, Sequence

from models.adapt.learn import (Learned, combined, held_out_keeps, kept_by_precision, printed_in, taught,
                               without, wordings_json)
from models.adapt.corrected import corrected_truth, record_lines
from stages.extraction.field_specs import FIELDS
from stages.extraction.rule_decision import rules_decision
from stages.extraction.rules.extract import winners
from stages.extraction.rules.lexicon import FULL_LEXICON, extend_lexicon
from stages.extraction.rules.records import flat_lines
from stages.extraction.strategies import LEARNED_PREFIX

log = logging.getLogger(__name__)

MIN_RIGHT = 3  # held-out documents a field's learned wordings must read right, none wrong (docs/decisions.md)
METHOD = "leave_one_out"


def ambiguous(key: str, wording: str) -> bool:
    """Whether a shipped label containing ``wording`` names another field of ``key``'s kind."""
    kind = FIELDS[key].kind
    return any(wording in text and any(k != key and k in FIELDS and FIELDS[k].kind == kind for k in label.fields)
               for text, label in FULL_LEXICON.labels.items())


def check_wordings(each: Sequence[Learned], records: Sequence[dict], today: Optional[date] = None) -> dict[str, Any]:
    """The manifest's ``checked`` entry: per field, held-out documents where the rules read it through a learned
    wording ``right`` (the corrected value) or ``wrong`` (another value, or one where the reviewer left it empty),
    ``ambiguous``: fields with a learned wording :func:`ambiguous` names, ``untested``: fields with a wording
    fewer than ``MIN_RIGHT`` documents taught (kept because it is most of a small folder's wordings for the field:
    with one of its documents held out, the others may not keep it, so no held-out document was read through it,
    while another wording of the field was), and ``fields``: those with ``right >= MIN_RIGHT`` and
    ``wrong == 0``, less the ambiguous and the untested ones. ``each[i]`` is what corrected document ``i``
    alone taught (:func:`models.adapt.learn.learn` of it), ``records[i]`` its JSON."""
    today = today or date.today()
    folder = combined(each)
    counts = taught(folder)
    printed = Counter({text: printed_in(folder, text) for text in {t for _, t in counts}})  # once, not per document
    by_precision = [kw for kw, n in sorted(counts.items()) if kept_by_precision(folder, *kw, n)]
    right: Counter = Counter()
    wrong: Counter = Counter()
    for i, record in enumerate(records if len(each) > 1 else ()):  # one document has no other to learn from
        rest = without(folder, each[i], printed)  # the other documents' teaching
        rest_counts = taught(rest)
        pairs = [(w["wording"], key) for key, entries in wordings_json(rest).items() for w in entries]
        pairs += [(text, key) for key, text in by_precision if (text, key) not in pairs
                  and held_out_keeps(rest_counts[(key, text)], printed_in(rest, text))]
        if not pairs:
            continue
        decision = rules_decision(flat_lines(record_lines(record)[0]), today, extend_lexicon(FULL_LEXICON, pairs))
        truth = corrected_truth(record, today)
        for key, m in winners(decision).items():
            if m is None or not m.method.startswith(LEARNED_PREFIX) or key not in truth:
                continue  # a field the reviewer's record does not speak for is no evidence either way
            (right if m.value is not None and m.value == truth[key] else wrong)[key] += 1
    kept = wordings_json(folder)
    unsure = sorted({key for key, entries in kept.items() for w in entries if ambiguous(key, w["wording"])})
    untested = sorted(key for key, entries in kept.items() if any(counts[(key, w["wording"])] < MIN_RIGHT
                                                                   for w in entries))
    keys = sorted(set(right) | set(wrong))
    checked = [k for k in keys if right[k] >= MIN_RIGHT and not wrong[k] and k not in unsure and k not in untested]
    log.info("learned wordings checked on held-out corrections: %d fields vouched of %d read", len(checked), len(keys))
    entry = {"method": METHOD, "min_right": MIN_RIGHT,
             "per_field": {k: {"right": right[k], "wrong": wrong[k]} for k in keys}, "ambiguous": unsure,
             "untested": untested, "fields": checked}
    entry["pending"] = pending(entry, kept)
    return entry


def pending(checked: dict[str, Any], kept: dict[str, Any]) -> dict[str, str]:
    """Per field with a kept wording that is not vouched for, why, in the words a reviewer acts on: what more
    corrected documents of the form would settle (fewer confirmations than :data:`MIN_RIGHT`, a wording too few
    documents taught), or why no number of them will (a wording that read another value, an ambiguous one)."""
    out: dict[str, str] = {}
    counts = checked["per_field"]
    for key in sorted(set(kept) - set(checked["fields"])):
        c = counts.get(key, {"right": 0, "wrong": 0})
        if c["wrong"]:
            out[key] = f"read another value than the reviewer's on {c['wrong']} held-out document(s)"
        elif key in checked["ambiguous"]:
            out[key] = "its wording is part of another field's label elsewhere: never vouched for"
        elif key in checked["untested"]:
            out[key] = f"a wording taught by fewer than {MIN_RIGHT} documents: correct more of its form"
        else:
            out[key] = (f"read right on {c['right']} held-out document(s) of {MIN_RIGHT} needed: "
                        "correct more of its form")
    return out
