"""The rules extractor, docpipe's default extraction: OCR lines (text + polygon + page) -> one match per field.

How a value is found, strongest first:

1. a label from the lexicon (:mod:`.lexicon`; tolerant to inner spaces, an optional colon, ``(元)``, dotted
   leaders, 为/是) followed by (a) the rest of its line, else (b) the nearest line to its right on the same row,
   else (c) the line directly below it (in a column table: the value under the same header) (:mod:`.labels`);
2. narrative sentences (``兹有投保人张三（身份证号码：…）以李四为被保险人``, ``自…零时起至…二十四时止``),
   read over the lines of a wrapped paragraph joined together (:mod:`.narrative`);
3. field-shaped patterns (valid 18-character IDs near 投保人/被保险人, mobiles, dated lines, company names)
   (:mod:`.patterns`);
4. labels outside the lexicon, matched to fields by similarity, for fields still empty (:mod:`.unknown_labels`).

Bare labels (姓名, 证件号码, 联系电话, 地址) take their role from the nearest role word before them (same line,
same row, a merged cell to the left, or earlier lines; :mod:`.roles`); agent/hotline/company labels are distractors
whose values are never used. Every value is trimmed and checked per field kind (:mod:`.values`) and normalized with
the field registry; the best-scored candidate per field wins (:mod:`.extract`).

Geometry is read after undoing the page's skew (:mod:`stages.layout`); an OCR line holding several boxes (runs of 2+
spaces) is split; a label wrapped inside a table cell (``投保人通讯地`` / ``址``) is joined (:mod:`.lines`); a value
that wraps (in a paragraph or a cell) is continued on the next line (:mod:`.wrapping`).
"""
from stages.extraction.rules.extract import extract_rules
from stages.extraction.rules.records import OcrLine, RuleMatch, lines_from_records

__all__ = ["OcrLine", "RuleMatch", "extract_rules", "lines_from_records"]
