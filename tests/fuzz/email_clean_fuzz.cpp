// The e-mail cleaner promises to be total: any bytes give a result, never an error.
#include "data/email_clean.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)hwt::clean_email(hwt::fuzz::as_text(data, size));
  return 0;
}
