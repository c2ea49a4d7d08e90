import { isDatasetError } from '@oxicloud/dataset';
import { ServerError } from '../server-error.js';

/** Runs `parse`; a `DatasetError` it throws (a bad seed flag) becomes one `BAD_ARGUMENT` line. */
export function asBadArgument<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (isDatasetError(error)) throw new ServerError('BAD_ARGUMENT', error.message, { cause: error });
    throw error;
  }
}
