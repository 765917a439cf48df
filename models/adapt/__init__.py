"""Learning from reviewers' corrections without training a network: label wordings and layout relations per
field (``docpipe train --labels``; the folder format is docs/adaptation.md)."""
