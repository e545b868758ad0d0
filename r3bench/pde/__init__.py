"""Code-as-action PDE solver tasks (RLVP track) with a hybrid physics verifier.

    families.py  the PDE families (seen: advection, burgers, reaction_diffusion, diffusion_sorption,
                 darcy, reaction_diffusion_2d; held out: heat, advection_diffusion, kdv), hidden
                 instances, reference solutions, discrete residuals
    bank.py      the solver bank (>= 2 NumPy/SciPy schemes per seen family) = the SFT warm start
    verify.py    run a program in the sandbox on hidden instances -> ProgramVerdict (V, L_traj,
                 L_phys, reward, nRMSE with its normalisation, reason); never raises
    metrics.py   validity, pass@1, pass@k (unbiased estimator), best-of-k nRMSE
    tasks.py     prompts, lm-eval glue (dataset_*, prompt, results*), SFT export, GRPO reward

    python -m r3bench.pde export --out DIR     # DIR/sft.jsonl for python -m trainers.sft --data DIR
    python -m r3bench.pde check                # every bank solver on its family's verifier
"""
