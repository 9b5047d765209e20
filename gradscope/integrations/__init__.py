"""Framework integrations of :func:`gradscope.watch`, each importing its framework only when it is
imported itself: ``gradscope.integrations.lightning`` (a PyTorch Lightning ``Callback``) and
``gradscope.integrations.hf`` (a Hugging Face ``TrainerCallback``)."""
