"""Runtime helpers shared by every preset.

``threads``
    Thread pools and the splitting of batches across threads; the one check
    of ``num_threads``.
``interrupts``
    Ctrl-C during compiled work: long work leaves the main thread, so a
    signal ends it as a clean ``KeyboardInterrupt``.
``boxing``
    Compiled construction of Python lists and strings from token rows.
``gcpause``
    Pausing the garbage collector while many objects are made.
``unicode``
    Unicode properties over all code points, from the ``regex`` module.
"""
