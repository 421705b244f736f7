"""Runtime helpers shared by every preset.

``threads``
    Thread pools and the splitting of batches across threads.
``boxing``
    Compiled construction of Python lists and strings from token rows.
``gcpause``
    Pausing the garbage collector while many objects are made.
``unicode``
    Unicode properties over all code points, from the ``regex`` module.
"""
