import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsObject, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import { ToolViewBody } from './app.dto';

export class ViewBody {
  @ApiProperty({ format: 'uuid', description: 'The View binding: its tool calls go through `POST /v1/views/{id}/calls`' })
  id!: string;

  @ApiProperty({ format: 'uuid' })
  connectionId!: string;

  @ApiProperty({ description: 'The tool whose View this is' })
  toolName!: string;

  @ApiProperty({ example: 'ui://weather/forecast.html' })
  uri!: string;

  @ApiProperty({ description: 'The connection revision whose tool declarations the View’s calls send' })
  revision!: number;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

export class OpenedViewBody extends ToolViewBody {
  @ApiProperty({ format: 'uuid', description: 'The View binding: its tool calls go through `POST /v1/views/{id}/calls`' })
  id!: string;

  @ApiProperty({ format: 'uuid' })
  connectionId!: string;

  @ApiProperty({ description: 'The connection revision whose tool declarations the View’s calls send' })
  revision!: number;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

export class ViewCallRequest {
  @ApiProperty({ description: 'The name of the tool on its server (a tool of the View’s connection whose visibility includes `app`)', maxLength: 200 })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name!: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'The tool’s arguments (default `{}`)' })
  @IsOptional()
  @IsObject()
  arguments?: Record<string, unknown>;
}

export class ViewCallResultBody {
  @ApiProperty()
  isError!: boolean;

  @ApiProperty({ description: 'The tool’s answer as text (an error names its category and error ID)' })
  text!: string;
}

export class ViewCallBody {
  @ApiProperty({ format: 'uuid' })
  executionId!: string;

  @ApiProperty({ description: 'The execution’s state: `completed` with a result, `outcome_unknown` when the answer of an unsafe call was lost, …' })
  state!: string;

  @ApiProperty({ type: ViewCallResultBody, nullable: true, description: 'Once completed: the tool’s answer' })
  result!: ViewCallResultBody | null;

  @ApiProperty({ type: String, nullable: true })
  category!: string | null;

  @ApiProperty({ type: String, nullable: true })
  errorId!: string | null;
}
