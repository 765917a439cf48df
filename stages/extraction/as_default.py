"""An adapted document's doubtful fields decided as the default pipeline decides them (pure functions).

A field an adapted folder decided through a wording no held-out check vouched for, or one its refit scorer decided
otherwise than the shipped scorer, has a confidence no calibrator was fitted on. Where the default pipeline (the
same stage without the folder) outputs the same value for such a field, that value's confidence is the
default's own calibrated one: the field's record, evidence and review reasons are taken from the default decision,
the other fields keep the adapted decision's, and the document is routed again on the fields together
(stages/extraction/routing.py). Where the default outputs another value for a doubtful field, nothing here applies
and the document keeps ``uncalibrated:adapted`` (docs/adaptation.md, "Routing")."""
from __future__ import annotations

from typing import Any, Collection, Mapping, Optional, Sequence

from stages.extraction.field_specs import FIELDS
from stages.extraction.routing import route

# diagnostics ``adapted``: the fields whose record, confidence and reasons are the default pipeline's
FIELDS_AS_DEFAULT = "fields_as_default"


def _value(fields: Mapping[str, Any], key: str) -> Any:
    return (fields.get(key) or {}).get("value")


def same_values(a: Mapping[str, Any], b: Mapping[str, Any], keys: Collection[str]) -> bool:
    """Whether two decisions output the same value (or none) for each of ``keys``."""
    return all(_value(a, k) == _value(b, k) for k in keys)


def _field_of(reason: str) -> Optional[str]:
    key = reason.split(":", 1)[1] if ":" in reason else None
    return key if key in FIELDS else None


def merged(adapted: tuple[dict[str, Any], dict[str, Any]], default: tuple[dict[str, Any], dict[str, Any]],
           doubtful: Collection[str], required: Sequence[str], max_error_rate: float, floor: float,
           ) -> tuple[dict[str, Any], list[str], dict[str, Any]]:
    """``(fields, diagnostics)`` of the adapted and the default decision of one document, whose outputs for every
    ``doubtful`` field are the same (:func:`same_values`): the fields, review reasons and diagnostics with the
    doubtful fields as the default decided them, routed again with the assembler's settings (``required``,
    ``max_error_rate``, ``floor``). Hard reasons of no field (a source without a calibrator) hold from either."""
    (a_fields, a_diag), (d_fields, d_diag) = adapted, default
    doubt = set(doubtful)

    def pick(key: str) -> tuple[dict[str, Any], dict[str, Any]]:
        return (d_fields, d_diag) if key in doubt else (a_fields, a_diag)

    fields = {k: pick(k)[0].get(k) for k in set(a_fields) | set(d_fields)}
    hard = [r for r in a_diag["routing"]["hard_reasons"] if _field_of(r) not in doubt]
    hard += [r for r in d_diag["routing"]["hard_reasons"] if _field_of(r) in doubt
             or (_field_of(r) is None and r not in hard)]
    absent = {k: pick(k)[1]["absent_ok"][k] for k, f in fields.items() if f is None and k in pick(k)[1]["absent_ok"]}
    found = {k: f["confidence"] for k, f in fields.items() if f is not None}
    invalid = [k for k, f in fields.items() if f is not None and not f.get("valid", False)]
    routing = route(found, absent, required, invalid, max_error_rate, floor, extra_hard=hard)
    diagnostics = dict(a_diag)
    for part in ("methods", "calibration", "evidence", "redecoded"):
        mine = {k: v for k, v in (a_diag.get(part) or {}).items() if k not in doubt}
        diagnostics[part] = {**mine, **{k: v for k, v in (d_diag.get(part) or {}).items() if k in doubt}}
    diagnostics["absent_ok"] = {k: round(v, 6) for k, v in absent.items()}
    diagnostics["routing"] = routing.as_dict()
    diagnostics["adapted"] = {FIELDS_AS_DEFAULT: sorted(doubt)}
    return fields, list(routing.reasons), diagnostics
