import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { BotTool, BotView } from '@openbot/openbot';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsObject, IsOptional, IsString, Matches, MaxLength, MinLength, ValidateNested } from 'class-validator';

export const MAX_BOT_TOOLS = 64;
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

export class BotToolInput {
  @ApiProperty({ pattern: TOOL_NAME.source, example: 'get_weather', description: 'Unique within the Bot' })
  @IsString()
  @Matches(TOOL_NAME, { message: 'name must be 1 to 64 letters, digits, "_" or "-"' })
  name!: string;

  @ApiProperty({ maxLength: 1024 })
  @IsString()
  @MaxLength(1024)
  description!: string;

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'A JSON schema of the arguments' })
  @IsObject()
  parameters!: Record<string, unknown>;
}

export class CreateBotRequest {
  @ApiProperty({ example: 'Support', minLength: 1, maxLength: 200 })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  @Matches(/\S/, { message: 'name must not be blank' })
  name!: string;

  @ApiProperty({ example: 'local/gpt-4o-mini', maxLength: 300, description: '`<provider name>/<model id>`; the provider must exist in the organization' })
  @IsString()
  @MaxLength(300)
  model!: string;

  @ApiPropertyOptional({ maxLength: 100_000, description: 'The system instructions; empty when absent' })
  @IsOptional()
  @IsString()
  @MaxLength(100_000)
  instructions?: string;

  @ApiPropertyOptional({ type: [BotToolInput], maxItems: MAX_BOT_TOOLS })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_BOT_TOOLS)
  // ValidateNested alone lets arrays of arrays through: each item must itself be an object.
  @IsObject({ each: true, message: 'each of tools must be an object' })
  @ValidateNested({ each: true })
  @Type(() => BotToolInput)
  tools?: BotToolInput[];
}

export class UpdateBotRequest {
  @ApiPropertyOptional({ minLength: 1, maxLength: 200 })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  @Matches(/\S/, { message: 'name must not be blank' })
  name?: string;

  @ApiPropertyOptional({ maxLength: 300, description: '`<provider name>/<model id>`; the provider must exist in the organization' })
  @IsOptional()
  @IsString()
  @MaxLength(300)
  model?: string;

  @ApiPropertyOptional({ maxLength: 100_000 })
  @IsOptional()
  @IsString()
  @MaxLength(100_000)
  instructions?: string;

  @ApiPropertyOptional({ type: [BotToolInput], maxItems: MAX_BOT_TOOLS, description: 'Replaces the whole tool set' })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_BOT_TOOLS)
  @IsObject({ each: true, message: 'each of tools must be an object' })
  @ValidateNested({ each: true })
  @Type(() => BotToolInput)
  tools?: BotToolInput[];
}

export class BotToolBody {
  @ApiProperty()
  name!: string;

  @ApiProperty()
  description!: string;

  @ApiProperty({ type: 'object', additionalProperties: true })
  parameters!: Record<string, unknown>;
}

export class BotBody {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty()
  name!: string;

  @ApiProperty({ description: '`<provider name>/<model id>`' })
  model!: string;

  @ApiProperty()
  instructions!: string;

  @ApiProperty({ type: [BotToolBody] })
  tools!: BotToolBody[];

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  @ApiProperty({ format: 'date-time' })
  updatedAt!: string;
}

export class BotPage {
  @ApiProperty({ type: [BotBody] })
  data!: BotBody[];

  @ApiProperty({ type: String, nullable: true })
  next!: string | null;
}

/** Only the fields a tool definition has, whatever else the DTO instance carries. */
export function toBotTools(tools: readonly BotToolInput[]): BotTool[] {
  return tools.map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.parameters }));
}

/** Lists every field explicitly, so a new column never leaks by default. */
export function toBotBody(bot: BotView): BotBody {
  return {
    id: bot.id,
    name: bot.name,
    model: bot.model,
    instructions: bot.instructions,
    tools: bot.tools.map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.parameters })),
    createdAt: bot.createdAt.toISOString(),
    updatedAt: bot.updatedAt.toISOString(),
  };
}
