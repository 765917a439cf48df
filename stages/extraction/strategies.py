"""The names of the rules' strategies (how a rule candidate was found): one vocabulary for the rules that set them,
the evidence and features that encode them, and the routing that reads them."""
from __future__ import annotations

LABEL = "label"  # a lexicon label, its value after it on its line
LABEL_RIGHT = "label_right"  # a lexicon label, its value in the box to its right on its row
LABEL_BELOW = "label_below"  # a lexicon label, its value in the box below it
NARRATIVE = "narrative"  # a narrative sentence (兹有投保人…以…为被保险人)
PATTERN = "pattern"  # a field-shaped pattern (an ID number near a role word, a mobile number, a company name)
UNKNOWN_LABEL = "unknown_label"  # a label outside the lexicon, its field guessed by similarity
COPY_OF_POLICYHOLDER = "same_as_policyholder"  # the insured's copy of the policyholder's value (本人, 同投保人)

# a value found through a learned wording (an adapted folder's): its strategy is label, label_right… with this prefix
LEARNED_PREFIX = "learned_"

RULE_STRATEGIES: tuple[str, ...] = (LABEL, LABEL_RIGHT, LABEL_BELOW, NARRATIVE, PATTERN, UNKNOWN_LABEL,
                                    COPY_OF_POLICYHOLDER)
