"""The pretraining-data library: raw text -> sentences -> ALBERT pretraining TFRecords.

It imports nothing from `albert_cli`, the command layer, whose commands wrap it. A module named
like its command (`create_pretraining_data`, `split_corpus`, `train_sentencepiece`,
`beam_pipeline`) still runs that command when executed with `python -m data_prep.<name>`: its
`__main__` block hands over to `albert_cli.<name>` by name (`runpy`), so only running it as a
script loads the command layer, importing it never does.
"""
