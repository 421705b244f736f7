"""The HuggingFace pipeline stages every preset shares (issue 34): what a
tokenizer.json's post-processor adds around a text, in HF's template
syntax (:mod:`.template`).  A preset keeps only what is its own (its
model); the stages here know no model."""
