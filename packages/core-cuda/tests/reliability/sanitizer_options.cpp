// Under AddressSanitizer a failed allocation must come back as NULL / std::bad_alloc, as it does
// without it, so the out-of-memory tests see bsrmm's OUT_OF_MEMORY instead of ASan aborting.
// (Read by the ASan runtime at start-up; inert in builds without it.)
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }
