"""bsrmm.torch.parallel (issue 28): the nnz-balanced cuts on skewed patterns, and the
tensor-parallel MLP (ColumnParallelBsrLinear -> gelu (fused) -> RowParallelBsrLinear) in
spawned gloo processes at world size 1, 2 and 4 against the single-process BsrLinear pair in
float64: the output and every gradient (dX, dValues, dBias), uneven cuts, an empty block row and
an empty shard, the overlapped and the sequence-parallel reductions, gather_output, a
DeviceMesh, and the state round trip back to one BsrLinear."""

from __future__ import annotations

import copy
import io
import os
import re
import socket
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="bsrmm.torch needs torch (the bootstrap installs it)")
dist = pytest.importorskip("torch.distributed", reason="torch was built without torch.distributed")

import bsrmm  # noqa: E402
from bsrmm.torch import BsrLinear  # noqa: E402
from bsrmm.torch.parallel import (  # noqa: E402
    ColumnParallelBsrLinear, RowParallelBsrLinear, balanced_bounds, pair_feature_bounds,
    plan_shards, shard_bsr, take_shard,
)

needs_gloo = pytest.mark.skipif(not dist.is_available() or not dist.is_gloo_available(),
                                reason="torch.distributed has no gloo backend in this build")
needs_sddmm = pytest.mark.skipif(not hasattr(bsrmm, "sddmm"),
                                 reason="bsrmm.sddmm is not in this build: weight gradients need it")

D_MODEL, HIDDEN, TOKENS = 40, 72, (2, 4)   # 9 units of 8 hidden features: uneven at 2 and 4 ranks
BLOCK = (8, 4)                              # rectangular, so a bh / bw mix-up shows


def _power_law_mask(rows, cols, seed, exponent=1.5, shuffle=True):
    """Block row i keeps about cols / (i + 1)^exponent blocks (row 0 full); the rows shuffled,
    or heaviest first (the worst case for an even split of rows)."""
    gen = torch.Generator().manual_seed(seed)
    mask = torch.zeros(rows, cols, dtype=torch.bool)
    order = torch.randperm(rows, generator=gen).tolist() if shuffle else range(rows)
    for i, row in enumerate(order):
        keep = max(1, round(cols / (i + 1) ** exponent))
        mask[row, torch.randperm(cols, generator=gen)[:keep]] = True
    return mask


def _mlp(seed):
    """The reference pair in float64: a skewed first weight with an empty block row, a second
    whose last three units of input features hold no block."""
    torch.manual_seed(seed)
    first_mask = _power_law_mask(HIDDEN // BLOCK[0], D_MODEL // BLOCK[1], seed)
    first_mask[3] = False
    second_mask = torch.rand(D_MODEL // BLOCK[0], HIDDEN // BLOCK[1]) < 0.4
    second_mask[:, 12:] = False
    first = BsrLinear(D_MODEL, HIDDEN, BLOCK, first_mask, activation="gelu", dtype=torch.float64)
    second = BsrLinear(HIDDEN, D_MODEL, BLOCK, second_mask, dtype=torch.float64)
    return first, second


# ---- the cuts (no processes) ----

def test_balanced_cuts_keep_a_power_law_pattern_within_the_bound():
    # 512 block rows, row i holding 64 / (i + 1) blocks, heaviest first: 749 blocks, 64 in row 0.
    layer = BsrLinear(512, 4096, 8, _power_law_mask(512, 64, 1, exponent=1.0, shuffle=False), bias=False)
    largest = int(layer.indptr.diff().max())
    for world_size in (2, 4, 8):
        plan = plan_shards(layer, world_size, dim=0)
        even = plan_shards(layer, world_size, dim=0, balance="rows")
        # The stated bound: no rank above an even share plus the largest block row.
        assert max(plan.nnzb) <= layer.nnzb / world_size + largest, plan.report()
        assert sum(plan.nnzb) == sum(even.nnzb) == layer.nnzb
        assert even.imbalance > 1.3, even.report()  # the skew is real: rank 0 holds the heavy rows
        if world_size <= 4:  # the share is large against the largest row: near perfect
            assert plan.imbalance < 1.05, plan.report()


def test_balanced_bounds_give_every_rank_a_line_even_when_one_line_holds_everything():
    assert balanced_bounds([100, 0, 0, 0], 4) == (0, 1, 2, 3, 4)
    assert balanced_bounds([0, 0, 0, 9], 2) == (0, 3, 4)
    assert balanced_bounds([1] * 10, 3) == (0, 3, 7, 10)


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("world_size", [1, 2, 4])
def test_shards_tile_the_weight(dim, world_size):
    first, _ = _mlp(2)
    shards, plan = shard_bsr(first, world_size, dim=dim)
    dense = first.to_dense().detach()
    assert [s.nnzb for s in shards] == list(plan.nnzb)
    pieces = []
    for shard in shards:
        local = BsrLinear(shard.shape[1], shard.shape[0], shard.blocksize, shard.block_mask(),
                          bias=False, dtype=torch.float64)
        with torch.no_grad():
            local.values.copy_(shard.values)
        pieces.append(local.to_dense())
        (r0, r1), (c0, c1) = shard.row_range, shard.col_range
        torch.testing.assert_close(local.to_dense(), dense[r0:r1, c0:c1], rtol=0, atol=0)
    torch.testing.assert_close(torch.cat(pieces, dim=dim), dense, rtol=0, atol=0)
    if world_size == 1:  # one GPU: the whole layer, and its work reported
        assert plan.nnzb == (first.nnzb,) and "imbalance (max / mean) 1.000" in plan.report()


def test_the_pair_is_cut_in_one_place_on_whole_blocks_of_both():
    first, second = _mlp(3)
    bounds = pair_feature_bounds(first, second, 4)
    assert bounds[0] == 0 and bounds[-1] == HIDDEN and all(b % 8 == 0 for b in bounds)
    column = plan_shards(first, 4, 0, feature_bounds=bounds)
    row = plan_shards(second, 4, 1, feature_bounds=bounds)
    assert [b * BLOCK[0] for b in column.bounds] == [b * BLOCK[1] for b in row.bounds] == list(bounds)


def test_bad_arguments_are_refused_with_the_keyword():
    first, second = _mlp(4)
    with pytest.raises(ValueError, match="dim must be 0"):
        shard_bsr(first, 2, dim=2)
    with pytest.raises(ValueError, match="world_size=10 ranks cannot each hold a block row"):
        shard_bsr(first, 10)
    with pytest.raises(ValueError, match="balance must be one of"):
        shard_bsr(first, 2, balance="flops")
    with pytest.raises(TypeError, match="matrix_or_layer must be a bsrmm.torch.BsrLinear"):
        shard_bsr(torch.zeros(4, 4), 2)
    with pytest.raises(ValueError, match="feature_bounds must be 3 increasing multiples of 8"):
        plan_shards(first, 2, 0, feature_bounds=(0, 12, HIDDEN))
    with pytest.raises(ValueError, match="first's 72 output features are not second's"):
        pair_feature_bounds(first, first, 2)
    # The layer's own arguments are checked before it asks for a process group.
    for chunks in (0, True, 2.0, "4"):
        with pytest.raises(ValueError, match="overlap_chunks must be a positive int or None"):
            RowParallelBsrLinear(second, overlap_chunks=chunks)
    with pytest.raises(ValueError, match="comm_sm_margin must be a non-negative int"):
        RowParallelBsrLinear(second, comm_sm_margin=-1)


def test_auto_chunks_overlap_only_large_cuda_batches_across_ranks():
    from bsrmm.torch.parallel._overlap import AUTO_CHUNK_TOKENS, AUTO_CHUNKS, auto_chunks

    enough = torch.empty(AUTO_CHUNKS * AUTO_CHUNK_TOKENS, 8)
    assert auto_chunks(enough, 4) == 1  # gloo on the CPU: nothing to overlap with
    if torch.cuda.is_available():
        on_gpu = enough.cuda()
        assert auto_chunks(on_gpu, 4) == AUTO_CHUNKS
        assert auto_chunks(on_gpu, 1) == 1
        assert auto_chunks(on_gpu[:-1], 2) == 1


# ---- the layers, in spawned gloo processes ----

def _grads_of(layer):
    """A copy of ``layer`` whose values and bias are its gradients (to be sharded like it)."""
    grads = copy.deepcopy(layer)
    with torch.no_grad():
        grads.values.copy_(layer.values.grad)
        if layer.bias is not None:
            grads.bias.copy_(layer.bias.grad)
    return grads


def _reference(seed):
    first, second = _mlp(seed)
    x = torch.randn(*TOKENS, D_MODEL, dtype=torch.float64, requires_grad=True)
    weight = torch.randn(*TOKENS, D_MODEL, dtype=torch.float64)  # the loss's cotangent
    y = second(first(x))
    (y * weight).sum().backward()
    return first, second, x, weight, y.detach()


def _check_pair(group, seed, token_slice=None, **options):
    """The parallel pair's output and gradients against the single-process one."""
    first, second, x, weight, y = _reference(seed)
    balance = options.pop("balance", "nnz")
    world_size = dist.get_world_size(group if not hasattr(group, "get_group") else group.get_group())
    bounds = pair_feature_bounds(first, second, world_size, balance)
    column = ColumnParallelBsrLinear.from_bsr_linear(
        first, group, feature_bounds=bounds, sequence_parallel=options.get("sequence_parallel", False))
    row = RowParallelBsrLinear.from_bsr_linear(second, group, feature_bounds=bounds, **options)
    tokens = x.detach().reshape(-1, D_MODEL)
    cotangent = weight.reshape(-1, D_MODEL)
    expected_y, expected_dx = y.reshape(-1, D_MODEL), x.grad.reshape(-1, D_MODEL)
    if token_slice is not None:
        tokens, cotangent = tokens[token_slice], cotangent[token_slice]
        expected_y, expected_dx = expected_y[token_slice], expected_dx[token_slice]
    xp = tokens.clone().requires_grad_(True)
    yp = row(column(xp))
    (yp * cotangent).sum().backward()
    torch.testing.assert_close(yp, expected_y)
    torch.testing.assert_close(xp.grad, expected_dx)
    rank = dist.get_rank(row.group)
    first_grads = take_shard(_grads_of(first), column.plan, rank)
    second_grads = take_shard(_grads_of(second), row.plan, rank)
    torch.testing.assert_close(column.local.values.grad, first_grads.values)
    torch.testing.assert_close(column.local.bias.grad, first_grads.bias)
    torch.testing.assert_close(row.local.values.grad, second_grads.values)
    torch.testing.assert_close(row.bias.grad, second.bias.grad)
    return column, row, first, second


def _check_round_trip(column, row, first, second):
    for parallel, single in ((column, first), (row, second)):
        whole = parallel.to_bsr_linear()
        buffer = io.BytesIO()
        torch.save(whole.state_dict(), buffer)
        buffer.seek(0)
        state = torch.load(buffer, weights_only=True)
        for name, tensor in single.state_dict().items():
            torch.testing.assert_close(state[name], tensor, rtol=0, atol=0, msg=name)
        assert whole.activation == single.activation


def _check_gather_output(group, seed):
    first, _, x, _, _ = _reference(seed)
    cotangent = torch.randn(*TOKENS, HIDDEN, dtype=torch.float64)
    before = torch.get_rng_state()
    column = ColumnParallelBsrLinear.from_bsr_linear(first, group, gather_output=True)
    # Building a shard leaves the random stream where it was, the same on every rank.
    assert torch.equal(torch.get_rng_state(), before)
    xp = x.detach().clone().requires_grad_(True)
    out = column(xp)
    (out * cotangent).sum().backward()
    xr = x.detach().clone().requires_grad_(True)
    reference = first(xr)
    (reference * cotangent).sum().backward()
    torch.testing.assert_close(out, reference)
    torch.testing.assert_close(xp.grad, xr.grad)


def _check_refusals(group):
    first, second = _mlp(9)
    with pytest.raises(ValueError, match="cannot fuse an activation"):
        RowParallelBsrLinear.from_bsr_linear(first, group)
    for margin in (-1, True, 1.5):
        with pytest.raises(ValueError, match="comm_sm_margin must be a non-negative int"):
            RowParallelBsrLinear.from_bsr_linear(second, group, overlap_chunks=2, comm_sm_margin=margin)
    if dist.get_world_size(group) > 1:
        row = RowParallelBsrLinear.from_bsr_linear(second, group, balance="rows")
        with pytest.raises(ValueError, match="feature_bounds=pair_feature_bounds"):
            row(torch.randn(3, HIDDEN, dtype=torch.float64))


def _worker(rank, world_size, init_file):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world_size)
    try:
        group = dist.new_group(list(range(world_size)))
        column, row, first, second = _check_pair(group, seed=11)
        _check_round_trip(column, row, first, second)
        _check_pair(None, seed=12, overlap_chunks=3)
        _, rows_row, _, _ = _check_pair(group, seed=13, balance="rows")
        assert world_size != 4 or rows_row.plan.nnzb[-1] == 0  # an empty shard, multiplied
        _check_pair(group, seed=13, balance="rows", overlap_chunks=8)  # as many chunks as tokens
        _check_pair(group, seed=17, overlap_chunks=2, comm_sm_margin=0)  # the CPU has no SMs to leave
        per_rank = TOKENS[0] * TOKENS[1] // world_size if (TOKENS[0] * TOKENS[1]) % world_size == 0 else None
        if per_rank is not None:
            _check_pair(group, seed=14, token_slice=slice(rank * per_rank, (rank + 1) * per_rank),
                        sequence_parallel=True)
        _check_gather_output(group, seed=15)
        _check_refusals(group)
        from torch.distributed.device_mesh import init_device_mesh

        _check_pair(init_device_mesh("cpu", (world_size,)), seed=16)
        if rank == 0:
            print(f"world size {world_size}: {column.plan.report()}; {row.plan.report()}")
        # No rank tears its group down while another still talks to it (gloo aborts the
        # other process: "terminate called without an active exception").
        dist.barrier()
    finally:
        dist.destroy_process_group()


@needs_gloo
@needs_sddmm
@pytest.mark.parametrize("world_size", [1, 2, 4])
def test_the_parallel_mlp_equals_the_single_process_one(world_size, tmp_path, capfd):
    torch.multiprocessing.spawn(_worker, args=(world_size, str(tmp_path / "rendezvous")),
                                nprocs=world_size, join=True)
    out = capfd.readouterr().out
    assert f"world size {world_size}: dim=0: per-rank nnzb" in out  # the per-rank work, reported


@pytest.mark.skipif(not torch.cuda.is_available() or torch.cuda.device_count() < 2,
                    reason="NCCL tensor parallelism needs 2 or more CUDA devices "
                           f"(torch sees {torch.cuda.device_count() if torch.cuda.is_available() else 0})")
def test_the_parallel_mlp_on_nccl_equals_the_single_gpu_one(tmp_path):
    world_size = torch.cuda.device_count()
    torch.multiprocessing.spawn(_nccl_worker, args=(world_size, str(tmp_path / "rendezvous")),
                                nprocs=world_size, join=True)


def _nccl_worker(rank, world_size, init_file):
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"file://{init_file}", rank=rank, world_size=world_size)
    try:
        first, second = _mlp(21)
        first, second = first.to(f"cuda:{rank}"), second.to(f"cuda:{rank}")
        x = torch.randn(64, D_MODEL, dtype=torch.float64, device=f"cuda:{rank}")
        dist.broadcast(x, 0)
        bounds = pair_feature_bounds(first, second, world_size)
        xr = x.clone().requires_grad_(True)
        reference = second(first(xr))
        reference.square().sum().backward()
        # The overlap with NCCL's default margin, none, and one that leaves the multiply 1 SM.
        for margin in (16, 0, 1 << 20):
            column = ColumnParallelBsrLinear.from_bsr_linear(first, feature_bounds=bounds)
            row = RowParallelBsrLinear.from_bsr_linear(second, feature_bounds=bounds, overlap_chunks=4,
                                                       comm_sm_margin=margin)
            xp = x.clone().requires_grad_(True)
            row(column(xp)).square().sum().backward()
            torch.testing.assert_close(row(column(x)), reference.detach(), msg=f"margin {margin}")
            torch.testing.assert_close(xp.grad, xr.grad, msg=f"margin {margin}")
            grads = take_shard(_grads_of(first), column.plan, rank)
            torch.testing.assert_close(column.local.values.grad, grads.values)
            row_grads = take_shard(_grads_of(second), row.plan, rank)
            torch.testing.assert_close(row.local.values.grad, row_grads.values, msg=f"margin {margin}")
        # No rank tears its group down while another still talks to it (gloo aborts the
        # other process: "terminate called without an active exception").
        dist.barrier()
    finally:
        dist.destroy_process_group()


# ---- the README's example (a ```py block: the single-process README runner leaves it alone) ----

def _readme_worker(rank, world_size, port, code):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                      WORLD_SIZE=str(world_size))
    torch.set_num_threads(1)
    first, second = _mlp(31)
    torch.manual_seed(32)
    x = torch.randn(5, D_MODEL, dtype=torch.float64)
    scope = {"first": first, "second": second, "x": x}
    try:
        exec(compile(code, "README.md", "exec"), scope)
        torch.testing.assert_close(scope["y"], second(first(x)))
        torch.testing.assert_close(scope["whole"].to_dense(), second.to_dense(), rtol=0, atol=0)
        # No rank tears its group down while another still talks to it (gloo aborts the
        # other process: "terminate called without an active exception").
        dist.barrier()
    finally:
        dist.destroy_process_group()


@needs_gloo
def test_readme_parallel_example_runs_as_written():
    path = Path(__file__).resolve().parents[1] / "README.md"
    if not path.is_file():
        pytest.skip(f"{path} is not here (an installed copy of the tests)")
    examples = [code for code in re.findall(r"```py\n(.*?)```", path.read_text(), re.S)
                if "bsrmm.torch.parallel" in code]
    assert len(examples) == 1, f"{path} should show one bsrmm.torch.parallel example"
    with socket.socket() as probe:  # a free port for the rendezvous
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    torch.multiprocessing.spawn(_readme_worker, args=(2, port, examples[0]), nprocs=2, join=True)
