"""The keyword arguments of a short trainer run on the tiny model and the procedural export (conftest's
`tiny` and `data`), shared by the trainer tests: `make(sft.Config, **base_kw(tiny, data, out, max_steps=2))`."""


def base_kw(tiny, data, out, **kw):
    d = dict(model=tiny, data=data, output_dir=str(out), max_steps=3, batch_size=2, grad_accum=1, save_steps=2,
             eval_tasks="", report_to="none", max_length=4096, seed=0)
    d.update(kw)
    return d
