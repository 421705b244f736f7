"""Corpus scale: Arrow in and out, Dask and Spark jobs, models shipped to
worker processes.  Each module imports its optional extra (pyarrow, dask,
pyspark) when it is used; nothing here is imported by ``import segkit``.
The public modules are :mod:`segkit.dask` and :mod:`segkit.spark`.
"""
