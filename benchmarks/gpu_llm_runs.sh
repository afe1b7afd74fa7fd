#!/usr/bin/env bash
# The LLM learning runs on one GPU machine, every run its own process, all in parallel on the one GPU
# (results files carry device "cuda"): the LLM orchestrator on the team corpus (GRPO, exact and broadcast
# credit, seeds 0-2) and the team member `cold` (GRPO, exact and broadcast credit, seeds 0-2). Each GRPO
# run stops after TRAIN_MIN minutes of training (the updates done are recorded), then is evaluated greedily
# on fresh tasks. Test it on a CPU first with tiny settings, e.g.
#   UPD=2 PROMPTS=4 GENS=2 VAL=4 TEST=4 PROBE=1 WARM=2 EVAL=4 SEEDS=0 benchmarks/gpu_llm_runs.sh MODEL /tmp/g 0.2 cpu
# usage: benchmarks/gpu_llm_runs.sh MODEL OUT TRAIN_MIN [DEVICE]
set -u
MODEL=$1 OUT=$2 TMIN=$3 DEV=${4:-cuda}
C=src/orchestrace/data/corpora
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false
UPD=${UPD:-2000} PROMPTS=${PROMPTS:-8} GENS=${GENS:-8} VAL=${VAL:-48} TEST=${TEST:-0} PROBE=${PROBE:-25}
WARM=${WARM:-10} EVAL=${EVAL:-400} SEEDS=${SEEDS:-0 1 2} LR=${LR:-1e-4} WLR=${WLR:-2e-4} WUPD=${WUPD:-2000}
for cr in exact broadcast; do
  for s in $SEEDS; do
    python3 benchmarks/llm_orchestrator.py --model "$MODEL" --device "$DEV" --corpus $C/smollm2-team-v1 \
      --test $C/smollm2-team-fresh-v1 --threads 1 --seeds "$s" --credits $cr --updates "$UPD" \
      --max-train-min "$TMIN" --format-warmup "$WARM" --prompts "$PROMPTS" --generations "$GENS" \
      --probe-every "$PROBE" --val-tasks "$VAL" --test-tasks "$TEST" --max-completion 10 --temperature 1.0 \
      --lr "$LR" --balance-cells --budget-min 60 --out "$OUT/orch-$cr-$s" >"$OUT/orch-$cr-$s.log" 2>&1 &
    python3 benchmarks/worker_credit.py --model "$MODEL" --device "$DEV" --seeds "$s" --credits $cr \
      --updates "$WUPD" --max-train-min "$TMIN" --tasks-per-update "$PROMPTS" --generations "$GENS" --lr "$WLR" \
      --eval-tasks "$EVAL" --probe-tasks "$VAL" --probe-every "$PROBE" --threads 1 --work "$OUT/wk-$cr-$s" \
      --out "$OUT/worker-$cr-$s.json" --picture "$OUT/worker-$cr-$s.png" >"$OUT/worker-$cr-$s.log" 2>&1 &
  done
done
wait
