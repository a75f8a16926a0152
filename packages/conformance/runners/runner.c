/* The C ABI's conformance runner: every case of a vectors folder straight through bsrmm.h.
 *
 *   bsrmm_conformance_c VECTORS OUT DEVICE        DEVICE: cpu | cuda:N
 *
 * Writes OUT/results.txt ("<id> ok", "<id> error <STATUS> <message>" or "<id> skip <reason>")
 * and OUT/<id>.bin, the whole C buffer after each successful multiply (for op=sddmm: the
 * values, through bsrmm_sddmm). The manifest format is
 * in packages/conformance/README.md. The C ABI takes bare pointers, so a case whose arrays are
 * shorter than its descriptor says is skipped: passing it would be an out-of-bounds read, not a
 * test of bsrmm. */
#include <bsrmm/bsrmm.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifdef BSRMM_CONFORMANCE_CUDA
#include <cuda_runtime_api.h>
#endif

typedef struct {
  char id[256], expect[64], dtype[16], op[16], b_layout[8], b_dtype[16], c_layout[8], c_dtype[16],
      bias_dtype[16], activation[16], y_layout[8], y_dtype[16], a_scales[16], b_scales[16];
  long long rows, cols, bh, bw, sort, b_rows, b_cols, b_ld, c_rows, c_cols, c_ld, bias, c_aliases_b,
      y_rows, y_cols, y_ld;
  double alpha, beta;
} vcase;

typedef struct {
  void* data;
  size_t bytes;
} blob;

static void die(const char* format, ...) {
  va_list args;
  va_start(args, format);
  fprintf(stderr, "bsrmm_conformance_c: ");
  vfprintf(stderr, format, args);
  fprintf(stderr, "\n");
  va_end(args);
  exit(2);
}

static void copy_text(char* dst, size_t size, const char* src, const char* key) {
  if (strlen(src) >= size) die("value of %s too long: %s", key, src);
  strcpy(dst, src);
}

/* One "key=value" token of a manifest line into the case. */
static void set_field(vcase* c, const char* key, const char* value) {
#define TEXT(name) if (strcmp(key, #name) == 0) { copy_text(c->name, sizeof c->name, value, key); return; }
#define INT(name) if (strcmp(key, #name) == 0) { c->name = strtoll(value, NULL, 10); return; }
#define REAL(name) if (strcmp(key, #name) == 0) { c->name = strtod(value, NULL); return; }
  TEXT(id) TEXT(expect) TEXT(dtype) TEXT(op) TEXT(b_layout) TEXT(b_dtype) TEXT(c_layout)
  TEXT(c_dtype) TEXT(bias_dtype) TEXT(activation) TEXT(y_layout) TEXT(y_dtype) TEXT(a_scales) TEXT(b_scales)
  INT(rows) INT(cols) INT(bh) INT(bw) INT(sort) INT(b_rows) INT(b_cols) INT(b_ld) INT(c_rows)
  INT(c_cols) INT(c_ld) INT(bias) INT(c_aliases_b) INT(y_rows) INT(y_cols) INT(y_ld)
  REAL(alpha) REAL(beta)
#undef TEXT
#undef INT
#undef REAL
  die("unknown manifest field %s", key);
}

static blob read_blob(const char* folder, const char* id, const char* name) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s/%s.bin", folder, id, name);
  blob b = {NULL, 0};
  FILE* f = fopen(path, "rb");
  if (f == NULL) return b;
  fseek(f, 0, SEEK_END);
  b.bytes = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  b.data = malloc(b.bytes > 0 ? b.bytes : 1);
  if (b.data == NULL || fread(b.data, 1, b.bytes, f) != b.bytes) die("cannot read %s", path);
  fclose(f);
  return b;
}

static bsrmm_dtype dtype_of(const char* name) {
  if (strcmp(name, "float32") == 0) return BSRMM_DTYPE_F32;
  if (strcmp(name, "float16") == 0) return BSRMM_DTYPE_F16;
  if (strcmp(name, "bfloat16") == 0) return BSRMM_DTYPE_BF16;
  if (strcmp(name, "float64") == 0) return BSRMM_DTYPE_F64;
  if (strcmp(name, "float8_e4m3") == 0) return BSRMM_DTYPE_FLOAT8_E4M3;
  if (strcmp(name, "float8_e5m2") == 0) return BSRMM_DTYPE_FLOAT8_E5M2;
  die("unknown dtype %s", name);
  return BSRMM_DTYPE_F32;
}

static size_t element_size(bsrmm_dtype dtype) {
  if (dtype == BSRMM_DTYPE_FLOAT8_E4M3 || dtype == BSRMM_DTYPE_FLOAT8_E5M2) return 1;
  return dtype == BSRMM_DTYPE_F64 ? 8 : dtype == BSRMM_DTYPE_F32 ? 4 : 2;
}

static bsrmm_activation activation_of(const char* name) {
  if (strcmp(name, "none") == 0) return BSRMM_ACTIVATION_NONE;
  if (strcmp(name, "relu") == 0) return BSRMM_ACTIVATION_RELU;
  if (strcmp(name, "gelu") == 0) return BSRMM_ACTIVATION_GELU;
  if (strcmp(name, "silu") == 0) return BSRMM_ACTIVATION_SILU;
  return (bsrmm_activation)99; /* "unknown": a value the core must reject */
}

/* Elements a rows x cols operand with this ld spans (0 when the core rejects the shape first). */
static long long span(long long rows, long long cols, long long ld, const char* layout) {
  const int row_major = strcmp(layout, "row") == 0;
  const long long major = row_major ? rows : cols, minor = row_major ? cols : rows;
  if (major <= 0 || minor <= 0 || ld < minor) return 0;
  return (major - 1) * ld + minor;
}

/* Where the operands live: host memory, or a copy on a CUDA device. */
typedef struct {
  bsrmm_device device;
} place;

static void* place_copy(const place* p, const blob* b) {
  if (p->device.type == BSRMM_DEVICE_CPU) return b->data;
#ifdef BSRMM_CONFORMANCE_CUDA
  void* d = NULL;
  if (cudaMalloc(&d, b->bytes > 0 ? b->bytes : 1) != cudaSuccess ||
      cudaMemcpy(d, b->data, b->bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
    die("cudaMalloc/cudaMemcpy of %zu bytes failed", b->bytes);
  }
  return d;
#else
  die("this runner was built without CUDA");
  return NULL;
#endif
}

static void place_back(const place* p, blob* b, const void* data) {
  if (p->device.type == BSRMM_DEVICE_CPU) return;
#ifdef BSRMM_CONFORMANCE_CUDA
  if (cudaMemcpy(b->data, data, b->bytes, cudaMemcpyDeviceToHost) != cudaSuccess) die("cudaMemcpy back failed");
#else
  (void)b;
  (void)data;
#endif
}

static void place_free(const place* p, void* data) {
  if (p->device.type == BSRMM_DEVICE_CPU) return;
#ifdef BSRMM_CONFORMANCE_CUDA
  cudaFree(data);
#else
  (void)data;
#endif
}

static bsrmm_layout layout_of(const char* name) {
  return strcmp(name, "row") == 0 ? BSRMM_LAYOUT_ROW_MAJOR : BSRMM_LAYOUT_COL_MAJOR;
}

/* An fp8 operand's scales from the manifest's kind and a_scales.bin / b_scales.bin (host). */
static bsrmm_scales scales_of(const char* kind, const blob* values) {
  bsrmm_scales s = bsrmm_scales_default();
  if (strcmp(kind, "per-tensor") == 0) s.kind = BSRMM_SCALE_PER_TENSOR;
  else if (strcmp(kind, "per-block") == 0) s.kind = BSRMM_SCALE_PER_BLOCK;
  else if (strcmp(kind, "per-block-row") == 0) s.kind = BSRMM_SCALE_PER_BLOCK_ROW;
  else if (strcmp(kind, "per-column") == 0) s.kind = BSRMM_SCALE_PER_COLUMN;
  else die("unknown scale kind %s", kind);
  s.data = (const float*)values->data;
  s.count = (int64_t)(values->bytes / sizeof(float));
  return s;
}

/* The case's operation on matrix `a`, its operands already placed: C = alpha op(A) B + beta C
 * (+ bias, activation), or for op=sddmm values (the c buffer) = alpha (X Y)[A's blocks] + beta
 * values with X in the b buffer and Y in y_data. */
static bsrmm_status run_operation(bsrmm_context_t ctx, const place* p, const vcase* c, bsrmm_matrix_t a,
                                  void* b_data, void* c_data, void* bias_data, void* y_data,
                                  const bsrmm_scales* b_scales) {
  const bsrmm_dense bd = {b_data, c->b_rows, c->b_cols, c->b_ld, layout_of(c->b_layout), dtype_of(c->b_dtype), p->device};
  bsrmm_dense cd = {c_data, c->c_rows, c->c_cols, c->c_ld, layout_of(c->c_layout), dtype_of(c->c_dtype), p->device};
  if (strcmp(c->op, "sddmm") == 0) {
    const bsrmm_dense yd = {y_data, c->y_rows, c->y_cols, c->y_ld, layout_of(c->y_layout), dtype_of(c->y_dtype), p->device};
    bsrmm_sddmm_options options = bsrmm_sddmm_options_default();
    options.alpha = c->alpha;
    options.beta = c->beta;
    return bsrmm_sddmm(ctx, a, &bd, &yd, &cd, &options);
  }
  bsrmm_matmul_options options = bsrmm_matmul_options_default();
  options.op_a = strcmp(c->op, "transpose") == 0 ? BSRMM_OP_TRANSPOSE : BSRMM_OP_NONE;
  options.alpha = c->alpha;
  options.beta = c->beta;
  options.bias = bias_data;
  options.activation = activation_of(c->activation);
  options.b_scales = b_scales;
  return bsrmm_matmul(ctx, a, &bd, &cd, &options);
}

/* Runs one case; writes its result line (without the id) into `result`. */
static void run_case(bsrmm_context_t ctx, const place* p, const char* folder, const char* out, const vcase* c,
                     char* result, size_t result_size) {
  blob row_ptr = read_blob(folder, c->id, "row_ptr"), col_idx = read_blob(folder, c->id, "col_idx"),
       values = read_blob(folder, c->id, "values"), b = read_blob(folder, c->id, "b"),
       cb = read_blob(folder, c->id, "c"), bias = read_blob(folder, c->id, "bias"), y = read_blob(folder, c->id, "y"),
       a_scales = read_blob(folder, c->id, "a_scales"), b_scales = read_blob(folder, c->id, "b_scales");
  const bsrmm_dtype dtype = dtype_of(c->dtype), b_dtype = dtype_of(c->b_dtype), c_dtype = dtype_of(c->c_dtype);
  const long long nnzb = (long long)(col_idx.bytes / 4);
  bsrmm_matrix_t a = NULL;
  void *b_data = NULL, *c_data = NULL, *bias_data = NULL, *y_data = NULL;

  const char* skip = NULL;
  if (c->rows >= 0 && c->bh > 0 && (long long)(row_ptr.bytes / 4) < c->rows / c->bh + 1) {
    skip = "row_ptr is shorter than rows / block_height + 1: the C ABI reads it by the descriptor's shape";
  } else if (c->bh > 0 && c->bw > 0 && (long long)(values.bytes / element_size(dtype)) < nnzb * c->bh * c->bw) {
    skip = "values is shorter than nnzb blocks: the C ABI reads it by the descriptor's shape";
  } else if (c->bias && dtype_of(c->bias_dtype) != c_dtype) {
    skip = "the C ABI takes the bias as a bare pointer to C's dtype: it has no dtype of its own";
  } else if (c->bias && (long long)(bias.bytes / element_size(c_dtype)) != c->c_rows) {
    skip = "the C ABI takes the bias as a bare pointer to C.rows values: it has no length to get wrong";
  } else if ((long long)(b.bytes / element_size(b_dtype)) < span(c->b_rows, c->b_cols, c->b_ld, c->b_layout) ||
             (long long)(cb.bytes / element_size(c_dtype)) < span(c->c_rows, c->c_cols, c->c_ld, c->c_layout) ||
             (c->y_rows > 0 && (long long)(y.bytes / element_size(dtype_of(c->y_dtype))) <
                                   span(c->y_rows, c->y_cols, c->y_ld, c->y_layout))) {
    die("case %s: a dense buffer is shorter than its shape (a bad vectors folder)", c->id);
  }
  if (skip != NULL) {
    snprintf(result, result_size, "skip %s", skip);
    goto done;
  }

  const bsrmm_device host = {BSRMM_DEVICE_CPU, 0};
  const bsrmm_bsr_desc desc = {c->rows, c->cols, (int32_t)c->bh, (int32_t)c->bw, nnzb, row_ptr.data,
                               col_idx.data, BSRMM_INDEX_I32, values.data, dtype, host};
  const uint32_t flags = c->sort ? BSRMM_CREATE_SORT_INDICES : BSRMM_CREATE_DEFAULT;
  const bsrmm_scales a_sc = strcmp(c->a_scales, "none") == 0 ? bsrmm_scales_default() : scales_of(c->a_scales, &a_scales);
  const bsrmm_scales b_sc = strcmp(c->b_scales, "none") == 0 ? bsrmm_scales_default() : scales_of(c->b_scales, &b_scales);
  bsrmm_status status = strcmp(c->a_scales, "none") == 0 ? bsrmm_matrix_create(ctx, &desc, flags, &a)
                                                          : bsrmm_matrix_create_scaled(ctx, &desc, &a_sc, flags, &a);
  if (status == BSRMM_STATUS_SUCCESS) {
    b_data = place_copy(p, &b);
    c_data = c->c_aliases_b ? b_data : place_copy(p, &cb);
    bias_data = c->bias ? place_copy(p, &bias) : NULL;
    y_data = strcmp(c->op, "sddmm") == 0 ? place_copy(p, &y) : NULL;
    status = run_operation(ctx, p, c, a, b_data, c_data, bias_data, y_data,
                           strcmp(c->b_scales, "none") == 0 ? NULL : &b_sc);
    if (status == BSRMM_STATUS_SUCCESS) status = bsrmm_context_synchronize(ctx);
  }
  if (status != BSRMM_STATUS_SUCCESS) {
    snprintf(result, result_size, "error %s %s", bsrmm_status_name(status), bsrmm_last_error());
    for (char* ch = result; *ch; ++ch) {
      if (*ch == '\n' || *ch == '\r') *ch = ' ';
    }
    goto done;
  }
  place_back(p, &cb, c_data);
  char path[1024];
  snprintf(path, sizeof path, "%s/%s.bin", out, c->id);
  FILE* f = fopen(path, "wb");
  if (f == NULL || fwrite(cb.data, 1, cb.bytes, f) != cb.bytes || fclose(f) != 0) die("cannot write %s", path);
  snprintf(result, result_size, "ok");

done:
  bsrmm_matrix_destroy(a);
  if (b_data != NULL) place_free(p, b_data);
  if (c_data != NULL && c_data != b_data) place_free(p, c_data);
  if (bias_data != NULL) place_free(p, bias_data);
  if (y_data != NULL) place_free(p, y_data);
  free(row_ptr.data);
  free(col_idx.data);
  free(values.data);
  free(b.data);
  free(cb.data);
  free(bias.data);
  free(y.data);
  free(a_scales.data);
  free(b_scales.data);
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: bsrmm_conformance_c VECTORS OUT DEVICE   (DEVICE: cpu | cuda:N)\n");
    return 2;
  }
  const char *folder = argv[1], *out = argv[2];
  place p = {{BSRMM_DEVICE_CPU, 0}};
  if (strncmp(argv[3], "cuda:", 5) == 0) {
    p.device.type = BSRMM_DEVICE_CUDA;
    p.device.ordinal = (int32_t)atoi(argv[3] + 5);
#ifndef BSRMM_CONFORMANCE_CUDA
    die("device %s: this runner was built against a core without CUDA", argv[3]);
#else
    if (cudaSetDevice(p.device.ordinal) != cudaSuccess) die("cudaSetDevice(%d) failed", p.device.ordinal);
#endif
  } else if (strcmp(argv[3], "cpu") != 0) {
    die("DEVICE must be cpu or cuda:N, got %s", argv[3]);
  }
  bsrmm_context_t ctx = NULL;
  if (bsrmm_context_create(p.device, &ctx) != BSRMM_STATUS_SUCCESS) die("context on %s: %s", argv[3], bsrmm_last_error());

  char path[1024];
  snprintf(path, sizeof path, "%s/manifest.txt", folder);
  FILE* manifest = fopen(path, "r");
  if (manifest == NULL) die("cannot open %s", path);
  mkdir(out, 0777); /* an existing OUT is fine; any other failure shows at the fopen below */
  snprintf(path, sizeof path, "%s/results.txt", out);
  FILE* results = fopen(path, "w");
  if (results == NULL) die("cannot write %s", path);

  static char line[8192];
  if (fgets(line, sizeof line, manifest) == NULL || strncmp(line, "bsrmm-conformance 3", 19) != 0) {
    die("%s/manifest.txt: not a bsrmm-conformance 3 manifest", folder);
  }
  while (fgets(line, sizeof line, manifest) != NULL) {
    char* token = strtok(line, " \n");
    if (token == NULL) continue;
    if (strcmp(token, "case") != 0) die("manifest line must start with 'case'");
    vcase c;
    memset(&c, 0, sizeof c);
    while ((token = strtok(NULL, " \n")) != NULL) {
      char* eq = strchr(token, '=');
      if (eq == NULL) die("manifest token without '=': %s", token);
      *eq = '\0';
      set_field(&c, token, eq + 1);
    }
    static char result[4096];
    run_case(ctx, &p, folder, out, &c, result, sizeof result);
    fprintf(results, "%s %s\n", c.id, result);
  }
  fclose(manifest);
  if (fclose(results) != 0) die("cannot write results.txt");
  bsrmm_context_destroy(ctx);
  return 0;
}
