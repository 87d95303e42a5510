// The fields of a channel's config form, read from the OpenAPI document's channel config
// components (generated into channel-configs.ts): the drivers' schemas are the one definition of
// each field's label, prose, default, whether it is required or a secret, and how it is typed in.
// It imports only the generated file (with its extension), so that a test run by Node can load it.
import { CHANNEL_CONFIGS, type ChannelConfigProperty } from './channel-configs.js';

/** The channel types, as the document's components name them (the API's `ChannelType`). */
type ChannelType = keyof typeof CHANNEL_CONFIGS;

/**
 * How a field is typed in: `secret` a password input (a stored one reads back masked), `url` and
 * `text` one line, `multiline` a text area, `list` one entry per line, `number` a whole number,
 * `choice` a bounded whole number or empty (null: the driver decides), `checkbox` a boolean.
 */
export type ConfigFieldKind = 'text' | 'url' | 'secret' | 'multiline' | 'number' | 'choice' | 'checkbox' | 'list';

export interface ConfigField {
  key: string;
  label: string;
  kind: ConfigFieldKind;
  required: boolean;
  /** The schema's description. */
  hint?: string;
  /** The value a new channel's form starts with: the schema's default. */
  initial?: string | boolean;
  min?: number;
  max?: number;
  maxLength?: number;
}

/** A choice offers each whole number of its range; longer ranges are typed in. */
const CHOICE_MAX_VALUES = 10;

/** The field's own schema: a nullable field is `anyOf` [field, null], its words on either. */
function ownSchema(property: ChannelConfigProperty): { schema: ChannelConfigProperty; nullable: boolean } {
  const members = property.anyOf ?? [];
  const nullable = members.some((m) => m.type === 'null');
  const inner = members.find((m) => m.type !== 'null');
  if (!inner) return { schema: property, nullable };
  const outer = { ...property };
  delete outer.anyOf;
  return { schema: { ...inner, ...outer }, nullable };
}

function kindOf(schema: ChannelConfigProperty, nullable: boolean): ConfigFieldKind {
  if (schema.type === 'boolean') return 'checkbox';
  if (schema.type === 'array') return 'list';
  if (schema.type === 'integer' || schema.type === 'number') {
    const bounded = schema.minimum !== undefined && schema.maximum !== undefined && schema.maximum - schema.minimum < CHOICE_MAX_VALUES;
    return nullable && bounded ? 'choice' : 'number';
  }
  if (schema['x-secret'] === true) return 'secret';
  if (schema['x-input'] === 'url') return 'url';
  if (schema['x-input'] === 'multiline') return 'multiline';
  return 'text';
}

/** A channel type's config fields, in the schema's order. */
export function configFieldsOf(type: ChannelType): ConfigField[] {
  const config = CHANNEL_CONFIGS[type];
  const required = new Set(config.required ?? []);
  return Object.entries(config.properties).map(([key, property]) => {
    const { schema, nullable } = ownSchema(property);
    const kind = kindOf(schema, nullable);
    const initial = schema.default;
    return {
      key,
      label: schema.title ?? key,
      kind,
      required: required.has(key),
      hint: schema.description,
      initial: initial === undefined ? undefined : typeof initial === 'boolean' ? initial : String(initial),
      min: schema.minimum,
      max: schema.maximum,
      maxLength: schema.maxLength,
    };
  });
}

/** Every channel type's fields, built once. */
export const CONFIG_FIELDS = Object.fromEntries(
  (Object.keys(CHANNEL_CONFIGS) as ChannelType[]).map((type) => [type, configFieldsOf(type)]),
) as Record<ChannelType, ConfigField[]>;
