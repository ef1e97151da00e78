"""The tracker application, in rooms by job. Imports only go down:

    cli, server                                   what a person or a client talks to
    reports, interchange                          turn reports; export, import and PBEM files
    service, analysis                             use cases over the store; odds and luck
    storage                                       the event store and the campaign registry
    projections, domain (beside tracker/)         read models; the model and its rules

A room imports only from the rooms below it (tests/test_layers.py holds every room to it).
"""
