import { InvalidInput } from '@openbot/domain';

/**
 * Splits a model reference at its first `/` into the provider name and the provider's model id;
 * a reference without `/` or with an empty side is an InvalidInput on `model`.
 */
export function parseModelReference(model: string): { readonly provider: string; readonly modelId: string } {
  const slash = model.indexOf('/');
  const provider = slash < 0 ? '' : model.slice(0, slash);
  const modelId = slash < 0 ? '' : model.slice(slash + 1);
  if (provider === '' || modelId === '') {
    throw new InvalidInput([{ path: 'model', message: 'model must be "<provider name>/<model id>"' }]);
  }
  return { provider, modelId };
}
